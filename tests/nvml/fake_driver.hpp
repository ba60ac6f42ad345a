// SPDX-License-Identifier: Apache-2.0
// Test helper: writes a fake-NVML scenario (and a clock file that sets scenario time) to a
// temporary directory and opens a variant of the fake libnvidia-ml.so.1 through nvml::Library.
#pragma once

#include "core/time.hpp"
#include "nvml/library.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace gua::nvml::testing {

/// The three builds of the fake library (tests/fake_nvml/README.md).
enum class Variant { modern, legacy, r535 };

/// Path of a fake library variant in the build tree.
inline std::string fake_library_path(Variant variant) {
    const std::string dir = GUA_FAKE_NVML_DIR;
    switch (variant) {
    case Variant::legacy:
        return dir + "/v1/libnvidia-ml.so.1";
    case Variant::r535:
        return dir + "/r535/libnvidia-ml.so.1";
    case Variant::modern:
        break;
    }
    return dir + "/libnvidia-ml.so.1";
}

/// Wall time used as "now" for scenario time `seconds` (the binding only uses differences).
inline TimeUs wall_at(double seconds) {
    return 1778486400LL * k_us_per_second + static_cast<TimeUs>(seconds * 1e6);
}

/// Owns a scenario file and a clock file, and points the fake at them through the environment.
class FakeDriver {
  public:
    /// Writes `scenario`; with `manual_clock`, scenario time is what set_time() last wrote.
    explicit FakeDriver(const nlohmann::json& scenario, bool manual_clock = true) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "gua-fake-nvml-XXXXXX").string();
        m_dir = mkdtemp(pattern.data());
        write_scenario(scenario);
        setenv("GUA_FAKE_NVML_SCENARIO", (m_dir / "scenario.json").c_str(), 1);
        if (manual_clock) {
            set_time(0);
            setenv("GUA_FAKE_NVML_CLOCK_FILE", (m_dir / "clock").c_str(), 1);
        } else {
            unsetenv("GUA_FAKE_NVML_CLOCK_FILE");
        }
    }
    ~FakeDriver() {
        unsetenv("GUA_FAKE_NVML_SCENARIO");
        unsetenv("GUA_FAKE_NVML_CLOCK_FILE");
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    FakeDriver(const FakeDriver&) = delete;
    FakeDriver& operator=(const FakeDriver&) = delete;

    /// Replaces the scenario (read by the next nvmlInit).
    void write_scenario(const nlohmann::json& scenario) const {
        std::ofstream(m_dir / "scenario.json") << scenario.dump(2);
    }
    /// Sets scenario time in seconds.
    void set_time(double seconds) const { std::ofstream(m_dir / "clock") << seconds; }

    /// Opens a variant through the production loader.
    Result<std::unique_ptr<Library>> open(Variant variant = Variant::modern) const {
        return Library::open(fake_library_path(variant));
    }
    /// Opens a variant and wraps it in an NvmlSource; fails the test when it cannot.
    std::unique_ptr<NvmlSource> source(Variant variant = Variant::modern) const {
        auto library = open(variant);
        EXPECT_TRUE(library.ok()) << (library.ok() ? "" : library.error().message);
        return library.ok() ? std::make_unique<NvmlSource>(std::move(library).value()) : nullptr;
    }

  private:
    std::filesystem::path m_dir;
};

/// Time-weighted mean utilization of one poll (its samples' relative weights).
inline double poll_mean(const telemetry::DevicePoll& poll) {
    double sum = 0;
    double weight = 0;
    for (const auto& s : poll.util) {
        sum += s.pct * static_cast<double>(s.weight_us);
        weight += static_cast<double>(s.weight_us);
    }
    return weight > 0 ? sum / weight : 0;
}

} // namespace gua::nvml::testing

// SPDX-License-Identifier: Apache-2.0
// Shared harness of the daemon end-to-end tests: a temporary directory holding the scenario the
// fake libnvidia-ml.so.1 plays, its clock file, the database and the config; helpers that run the
// real `gua daemon` and `gua report` on them with bounded waits.
#pragma once

#include "support/daemon_process.hpp"
#include "support/raw_db.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gua::e2e {

using nlohmann::json;
using namespace std::chrono_literals;

/// The three builds of the fake library (tests/fake_nvml/README.md).
enum class FakeVariant { modern, v1, r535 };

inline std::string fake_library(FakeVariant variant = FakeVariant::modern) {
    const std::string dir = GUA_FAKE_NVML_DIR;
    switch (variant) {
    case FakeVariant::v1:
        return dir + "/v1/libnvidia-ml.so.1";
    case FakeVariant::r535:
        return dir + "/r535/libnvidia-ml.so.1";
    case FakeVariant::modern:
        break;
    }
    return dir + "/libnvidia-ml.so.1";
}

/// Replaces `path` atomically (write + rename), so a reader never sees a half-written file.
inline void write_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
    }
    std::filesystem::rename(tmp, path);
}

inline bool file_exists(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

/// A square wave of scenario time: `high` for `on_s`, then `low` for `off_s`, until `until_s`.
inline json square_wave(double on_s, double off_s, double until_s, double high = 100,
                        double low = 0) {
    json points = json::array();
    for (double t = 0; t < until_s; t += on_s + off_s) {
        points.push_back({t, high});
        points.push_back({t + on_s, low});
    }
    return points;
}

/// A compute process holding `mib` on `device`; its pid is a literal or read from env `pid_env`.
inline json holder(int device, double mib, double sm_util = 0, int pid = 0,
                   const std::string& pid_env = "") {
    json p = {{"device", device}, {"memory_mib", {{0, mib}}}, {"sm_util", {{0, sm_util}}}};
    if (!pid_env.empty()) {
        p["pid_env"] = pid_env;
    } else {
        p["pid"] = pid;
    }
    return p;
}

/// One temporary world per test: scenario, optional clock file, empty config, database.
class DaemonTest : public ::testing::Test {
  protected:
    DaemonTest() { write_atomically(config_path(), ""); }

    std::string db() const { return m_dir.file("gua.db"); }
    std::string path(const std::string& name) const { return m_dir.file(name); }
    std::string config_path() const { return m_dir.file("gua.toml"); }
    std::string scenario_path() const { return m_dir.file("scenario.json"); }

    /// Writes the scenario (read by the fake's next nvmlInit).
    void write_scenario(const json& scenario) const {
        write_atomically(scenario_path(), scenario.dump(2));
    }
    /// Sets scenario time (seconds); from the first call on, the fake reads time from this file.
    void set_clock(double seconds) {
        write_atomically(m_dir.file("clock"), std::to_string(seconds));
        m_env["GUA_FAKE_NVML_CLOCK_FILE"] = m_dir.file("clock");
    }
    /// Adds an environment variable for the daemon (e.g. a scenario's pid_env).
    void set_env(const std::string& name, const std::string& value) { m_env[name] = value; }

    /// The daemon's environment: the scenario, the clock file if any, no NVML override.
    std::map<std::string, std::string> env() const {
        std::map<std::string, std::string> e = m_env;
        e["GUA_FAKE_NVML_SCENARIO"] = scenario_path();
        e.try_emplace("GUA_FAKE_NVML_CLOCK_FILE", "");
        e.try_emplace("GUA_NVML_LIBRARY", "");
        return e;
    }

    /// `gua daemon --db <db> --config <empty> --nvml-library <variant> <extra…>`.
    std::vector<std::string> daemon_args(const std::vector<std::string>& extra,
                                         FakeVariant variant = FakeVariant::modern) const {
        std::vector<std::string> args{"daemon",
                                      "--db",
                                      db(),
                                      "--config",
                                      config_path(),
                                      "--nvml-library",
                                      fake_library(variant)};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }

    /// Starts the daemon in the background; stderr (its log) goes to `<name>.err`.
    std::unique_ptr<test::BackgroundProcess>
    start_daemon(const std::vector<std::string>& extra, FakeVariant variant = FakeVariant::modern,
                 const std::string& name = "daemon") const {
        return test::start_gua(daemon_args(extra, variant), env(), m_dir.path(), name);
    }

    /// Runs the daemon until it exits by itself (e.g. `--ticks N`), at most `timeout`.
    test::RunResult run_daemon(const std::vector<std::string>& extra,
                               FakeVariant variant = FakeVariant::modern,
                               std::chrono::milliseconds timeout = 30s) const {
        auto daemon = start_daemon(extra, variant, "run");
        const std::optional<int> code = daemon->wait_exit(timeout);
        EXPECT_TRUE(code.has_value())
            << "the daemon did not exit within " << timeout.count() << " ms:\n"
            << daemon->err();
        test::RunResult r{code.value_or(-1), daemon->out(), daemon->err()};
        std::filesystem::remove(daemon->err_path());
        std::filesystem::remove(m_dir.file("run.out"));
        return r;
    }

    /// `gua report --format json` over the last day of this test's database.
    json report(const std::vector<std::string>& extra = {}) const {
        std::vector<std::string> args{"report", "--db", db(), "--since", "1d", "--format", "json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const test::RunResult r = test::run_gua(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::object();
    }

    /// The report's row for GPU `index` (an empty object when absent).
    static json gpu_row(const json& report, int index) {
        for (const json& g : report.value("gpus", json::array())) {
            if (g["index"] == index) {
                return g;
            }
        }
        ADD_FAILURE() << "GPU " << index << " is not in the report";
        return json::object();
    }

    /// The report's §4 row for identity `name` (an empty object when absent).
    static json identity_row(const json& report, const std::string& name) {
        for (const json& i : report["identities"]["top"]) {
            if (i["name"] == name) {
                return i;
            }
        }
        ADD_FAILURE() << "identity " << name << " is not in the report:\n"
                      << report["identities"].dump(2);
        return json::object();
    }

    /// Recorded seconds of GPU `index` (the sum of its card-ticks' real durations).
    double recorded_seconds(int index) const {
        test::RawDb raw(db());
        const std::string s = raw.one(
            "SELECT sum(c.duration_us) FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE g.idx "
            "= " +
            std::to_string(index));
        return s.empty() || s == "NULL" ? 0.0 : std::stod(s) / 1e6;
    }

    /// Seconds of GPU `index`'s recorded card-ticks whose utilization was measured (a poll of a
    /// slow, loaded run can find its ring period still running at the end of a tick: that time
    /// is unmeasured, and counted in no state).
    double measured_seconds(int index) const {
        test::RawDb raw(db());
        const std::string s = raw.one(
            "SELECT sum(c.duration_us - c.unmeasured_us) FROM card_tick c JOIN gpu g ON g.id = "
            "c.gpu_id WHERE g.idx = " +
            std::to_string(index));
        return s.empty() || s == "NULL" ? 0.0 : std::stod(s) / 1e6;
    }

    test::TempDir m_dir;
    std::map<std::string, std::string> m_env;
};

/// The value of a GPU-hours field in seconds.
inline double seconds(const json& hours) {
    return hours.get<double>() * 3600.0;
}

} // namespace gua::e2e

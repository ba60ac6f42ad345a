// SPDX-License-Identifier: Apache-2.0
// Reading unit settings: time spans, drop-ins, and the settings that would hide the GPUs.
#include "core/fatal.hpp"
#include "ops/paths.hpp"
#include "ops/unit_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gua::ops {
namespace {

namespace fs = std::filesystem;

TEST(TimeSpan, ParsesSystemdSpans) {
    EXPECT_EQ(parse_time_span("120"), 120 * k_us_per_second);
    EXPECT_EQ(parse_time_span("120s"), 120 * k_us_per_second);
    EXPECT_EQ(parse_time_span("2min"), 120 * k_us_per_second);
    EXPECT_EQ(parse_time_span("1min 30s"), 90 * k_us_per_second);
    EXPECT_EQ(parse_time_span("500ms"), 500 * k_us_per_ms);
    EXPECT_EQ(parse_time_span("1h"), k_us_per_hour);
    EXPECT_FALSE(parse_time_span("soon"));
    EXPECT_FALSE(parse_time_span(""));
}

TEST(UnitSettings, DropInsOverrideAndResetTheUnit) {
    std::string pattern = (fs::temp_directory_path() / "gua-unit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    const fs::path dir = pattern;
    std::ofstream(dir / "gua.service")
        << "# comment\n[Unit]\nWatchdogSec=1s\n[Service]\nWatchdogSec=120s\nDeviceAllow=/dev/null "
           "r\n";
    fs::create_directories(dir / "admin");
    std::ofstream(dir / "admin/10-a.conf") << "[Service]\nWatchdogSec=30s\nDeviceAllow=\n";
    std::ofstream(dir / "admin/20-b.conf") << "[Service]\nPrivateDevices=yes\n";
    const UnitSettings unit =
        read_unit_settings((dir / "gua.service").string(), (dir / "admin").string());
    EXPECT_EQ(unit.watchdog_us, 30 * k_us_per_second);
    EXPECT_EQ(unit.service.count("DeviceAllow"), 0u) << "an empty assignment resets the list";
    EXPECT_EQ(blocking_settings(unit),
              std::vector<std::string>{"PrivateDevices=yes hides /dev/nvidia*"});
    fs::remove_all(dir);
}

TEST(UnitSettings, DeviceAllowWithoutNvidiaBlocksButWithNvidiaIsFine) {
    UnitSettings unit;
    unit.service["ProtectClock"] = {"yes"};
    EXPECT_EQ(blocking_settings(unit).size(), 1u);
    unit.service["DeviceAllow"] = {"char-nvidia-frontend rw", "/dev/nvidia-uvm rw"};
    EXPECT_TRUE(blocking_settings(unit).empty());
    unit.service["ProcSubset"] = {"pid"};
    unit.service["PrivateUsers"] = {"true"};
    unit.service["DynamicUser"] = {"on"};
    EXPECT_EQ(blocking_settings(unit).size(), 3u);
}

TEST(UnitSettings, ShippedUnitHasPrivateMountsAndRemoveIpcAndHidesNothingGuaNeeds) {
    const UnitSettings unit =
        read_unit_settings(std::string(GUA_SOURCE_DIR) + "/packaging/gua.service", "/nonexistent");
    EXPECT_EQ(unit.service.at("PrivateMounts"), std::vector<std::string>{"yes"});
    EXPECT_EQ(unit.service.at("RemoveIPC"), std::vector<std::string>{"yes"});
    EXPECT_EQ(unit.service.at("ProtectSystem"), std::vector<std::string>{"strict"});
    EXPECT_EQ(unit.service.at("StateDirectory"), std::vector<std::string>{"gua"});
    EXPECT_EQ(unit.service.at("AmbientCapabilities"), std::vector<std::string>{"CAP_KILL"});
    EXPECT_TRUE(blocking_settings(unit).empty());
}

TEST(Paths, SystemPathsLiveUnderTheRoot) {
    std::string pattern = (fs::temp_directory_path() / "gua-root-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    const Paths p = system_paths(pattern);
    EXPECT_FALSE(p.live());
    EXPECT_EQ(p.unit_file, pattern + "/etc/systemd/system/gua.service");
    EXPECT_EQ(p.unit_search.at(1), pattern + "/lib/systemd/system/gua.service");
    EXPECT_EQ(p.config_file, pattern + "/etc/gua/gua.toml");
    EXPECT_EQ(p.db, pattern + "/var/lib/gua/gua.db");
    EXPECT_EQ(p.pid_file, pattern + "/var/lib/gua/gua.pid");
    EXPECT_EQ(p.under_root("/var/lib/gua/other.db"), pattern + "/var/lib/gua/other.db");
    EXPECT_EQ(system_paths("").db, "/var/lib/gua/gua.db");
    EXPECT_TRUE(system_paths("/").live());
    fs::remove_all(pattern);
    EXPECT_THROW(system_paths(pattern), Fatal);
}

} // namespace
} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// The unit and default configuration built into the binary are the packaged files, and both
// are what the daemon and doctor accept.
#include "config/config.hpp"
#include "ops/packaged_files.hpp"
#include "ops/start_plan.hpp"
#include "ops/unit_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace gua::ops {
namespace {

std::string source_file(const std::string& relative) {
    std::ifstream in(std::string(GUA_SOURCE_DIR) + "/" + relative);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(PackagedFiles, AreTheSourcesVerbatim) {
    EXPECT_EQ(std::string(k_unit_text), source_file("packaging/gua.service"));
    EXPECT_EQ(std::string(k_config_text), source_file("packaging/gua.toml"));
}

TEST(PackagedFiles, UnitTextForPointsExecStartAtTheBinary) {
    const std::string unit = unit_text_for("/opt/gua/bin/gua");
    EXPECT_NE(unit.find("\nExecStart=/opt/gua/bin/gua daemon --config /etc/gua/gua.toml"),
              std::string::npos);
    EXPECT_EQ(unit.find("/usr/bin/gua"), std::string::npos);
}

TEST(PackagedFiles, DefaultConfigParsesToTheDefaults) {
    const Result<config::Config> c = config::parse_config(k_config_text, "gua.toml");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c.value().thresholds.active_util_pct, 10.0);
    EXPECT_EQ(c.value().thresholds.held_mib, 100);
    EXPECT_FALSE(c.value().interval_us);
    EXPECT_FALSE(c.value().db);
}

TEST(PackagedFiles, UnitKeepsProcAndDevicesVisibleAndTheWatchdogFits) {
    const std::string path = std::string(GUA_SOURCE_DIR) + "/packaging/gua.service";
    const UnitSettings unit = read_unit_settings(path, "/nonexistent");
    EXPECT_TRUE(blocking_settings(unit).empty());
    ASSERT_TRUE(unit.watchdog_us);
    EXPECT_GE(*unit.watchdog_us, 3 * 30 * k_us_per_second);
    EXPECT_EQ(unit.service.at("Type"), std::vector<std::string>{"notify"});
    EXPECT_EQ(unit.service.at("Restart"), std::vector<std::string>{"on-failure"});
    EXPECT_EQ(unit.service.at("StateDirectory"), std::vector<std::string>{"gua"});
    EXPECT_EQ(unit.service.at("User"), std::vector<std::string>{"gua"});
}

} // namespace
} // namespace gua::ops

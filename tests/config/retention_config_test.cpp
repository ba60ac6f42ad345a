// SPDX-License-Identifier: Apache-2.0
// [retention] in gua.toml: durations or "forever", with errors naming file, line and key.
#include "config/config.hpp"

#include <gtest/gtest.h>

namespace gua::config {
namespace {

TEST(RetentionConfig, DefaultsToNinetyDaysRawAndRollupsForever) {
    const Config c = parse_config("", "gua.toml").value();
    EXPECT_EQ(c.retention.raw_us, 90 * k_us_per_day);
    EXPECT_FALSE(c.retention.rollup_us.has_value());
}

TEST(RetentionConfig, ParsesDurationsAndForever) {
    const Config c =
        parse_config("[retention]\nraw = \"forever\"\nrollup = \"400d\"\n", "gua.toml").value();
    EXPECT_FALSE(c.retention.raw_us.has_value());
    EXPECT_EQ(c.retention.rollup_us, 400 * k_us_per_day);
}

TEST(RetentionConfig, RejectsBadValuesWithTheLine) {
    const Result<Config> r = parse_config("[retention]\nraw = \"10m\"\n", "gua.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("gua.toml:2: retention.raw"), std::string::npos);
    EXPECT_FALSE(parse_config("[retention]\nkeep = \"1d\"\n", "gua.toml").ok());
    EXPECT_FALSE(parse_config("[retention]\nrollup = 5\n", "gua.toml").ok());
}

} // namespace
} // namespace gua::config

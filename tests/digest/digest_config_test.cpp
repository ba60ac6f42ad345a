// SPDX-License-Identifier: Apache-2.0
// gua.toml's [digest] section: defaults, values, and each refusal naming file, line and key.
#include "config/config.hpp"

#include <gtest/gtest.h>

namespace gua::config {
namespace {

TEST(DigestConfig, DefaultsAndValues) {
    const Result<Config> none = parse_config("", "gua.toml");
    ASSERT_TRUE(none);
    EXPECT_EQ(none.value().digest.min_idle_held_hours, 1.0);
    EXPECT_EQ(none.value().digest.group_by, "team");
    EXPECT_TRUE(none.value().digest.recipients.empty());
    const Result<Config> r =
        parse_config("[digest]\nmin_idle_held_hours = 2.5\ngroup_by = \"namespace\"\n"
                     "admin = \"ops@example.org\"\n[digest.recipients]\nalice = \"a@x.org\"\n",
                     "gua.toml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value().digest.min_idle_held_hours, 2.5);
    EXPECT_EQ(r.value().digest.group_by, "namespace");
    EXPECT_EQ(r.value().digest.admin, "ops@example.org");
    EXPECT_EQ(r.value().digest.recipients.at("alice"), "a@x.org");
    const Result<Config> whole = parse_config("[digest]\nmin_idle_held_hours = 0\n", "gua.toml");
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole.value().digest.min_idle_held_hours, 0.0);
}

TEST(DigestConfig, RefusalsNameFileLineAndKey) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"[digest]\nbogus = 1\n", "gua.toml:2: digest.bogus: unknown key"},
        {"[digest]\nmin_idle_held_hours = -1\n", "gua.toml:2: digest.min_idle_held_hours:"},
        {"[digest]\nmin_idle_held_hours = \"1h\"\n", "gua.toml:2: digest.min_idle_held_hours:"},
        {"[digest]\ngroup_by = \"account\"\n", "gua.toml:2: digest.group_by:"},
        {"[digest]\nadmin = \"\"\n", "gua.toml:2: digest.admin:"},
        {"[digest.recipients]\nalice = \"a@x.org\\nBcc: all@x.org\"\n",
         "gua.toml:2: digest.recipients.alice:"},
        {"[digest]\nrecipients = \"a@x.org\"\n", "gua.toml:2: digest.recipients:"},
        {"digest = 3\n", "gua.toml:1: digest: expected a table"},
    };
    for (const auto& [text, want] : cases) {
        const Result<Config> r = parse_config(text, "gua.toml");
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().message.rfind(want, 0), 0u) << r.error().message;
    }
}

} // namespace
} // namespace gua::config

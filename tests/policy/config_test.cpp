// SPDX-License-Identifier: Apache-2.0
// [policy] and [[policy.rule]] parsing: defaults, every key, and one-line errors with file:line.
#include "config/config.hpp"

#include <gtest/gtest.h>

namespace gua::config {
namespace {

TEST(PolicyConfig, OffAndEmptyByDefault) {
    const Result<Config> c = parse_config("", "gua.toml");
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(c.value().policy.enabled);
    EXPECT_TRUE(c.value().policy.rules.empty());
    EXPECT_EQ(c.value().policy.max_actions_per_hour, 10);
}

TEST(PolicyConfig, ParsesEveryKey) {
    const Result<Config> c = parse_config(R"(
[policy]
enabled = true
max_actions_per_hour = 3
notify_command = "/usr/local/bin/tell"
exempt_users = ["alice"]
exempt_commands = ["Xorg"]
exempt_containers = ["abc123"]

[[policy.rule]]
name = "warn"
after = "2h"
action = "notify"

[[policy.rule]]
name = "reclaim"
after = "8h"
min_memory = "8GiB"
users = ["b*"]
groups = ["students"]
commands = ["python*"]
containers = ["*"]
gpus = ["0", "GPU-1a"]
action = "terminate"
dry_run = false
grace = "1m"
)",
                                          "gua.toml");
    ASSERT_TRUE(c.ok()) << c.error().message;
    const policy::PolicyConfig& p = c.value().policy;
    EXPECT_TRUE(p.enabled);
    EXPECT_EQ(p.max_actions_per_hour, 3);
    EXPECT_EQ(p.notify_command, "/usr/local/bin/tell");
    EXPECT_EQ(p.exempt_users, std::vector<std::string>{"alice"});
    EXPECT_EQ(p.exempt_commands, std::vector<std::string>{"Xorg"});
    EXPECT_EQ(p.exempt_containers, std::vector<std::string>{"abc123"});
    ASSERT_EQ(p.rules.size(), 2U);
    const policy::Rule& warn = p.rules[0];
    EXPECT_EQ(warn.name, "warn");
    EXPECT_EQ(warn.after_us, 2 * k_us_per_hour);
    EXPECT_EQ(warn.action, policy::Action::notify);
    EXPECT_TRUE(warn.dry_run) << "a new rule runs in dry run until set otherwise";
    EXPECT_EQ(warn.grace_us, 30 * k_us_per_second);
    EXPECT_FALSE(warn.min_memory_mib);
    const policy::Rule& reclaim = p.rules[1];
    EXPECT_EQ(reclaim.min_memory_mib, 8192);
    EXPECT_EQ(reclaim.users, std::vector<std::string>{"b*"});
    EXPECT_EQ(reclaim.groups, std::vector<std::string>{"students"});
    EXPECT_EQ(reclaim.commands, std::vector<std::string>{"python*"});
    EXPECT_EQ(reclaim.containers, std::vector<std::string>{"*"});
    EXPECT_EQ(reclaim.gpus, (std::vector<std::string>{"0", "GPU-1a"}));
    EXPECT_EQ(reclaim.action, policy::Action::terminate);
    EXPECT_FALSE(reclaim.dry_run);
    EXPECT_EQ(reclaim.grace_us, k_us_per_minute);
}

struct BadCase {
    const char* toml;
    const char* error;
};

TEST(PolicyConfig, ErrorsNameFileLineAndKey) {
    const BadCase cases[] = {
        {"[policy]\nenabeld = true\n", "gua.toml:2: policy.enabeld: unknown key"},
        {"[policy]\nenabled = \"yes\"\n", "gua.toml:2: policy.enabled: expected true or false"},
        {"[policy]\nmax_actions_per_hour = -1\n",
         "gua.toml:2: policy.max_actions_per_hour: expected a whole number >= 0"},
        {"[[policy.rule]]\nname = \"a\"\naction = \"notify\"\n",
         "gua.toml:1: policy.rule[0].after: every rule needs `after`, e.g. after = \"2h\""},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"2 hours\"\naction = \"notify\"\n",
         "gua.toml:3: policy.rule[0].after: expected a duration such as \"2h\" or \"30s\""},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"2h\"\naction = \"kill\"\n",
         "gua.toml:4: policy.rule[0].action: expected \"log\", \"notify\" or \"terminate\""},
        {"[[policy.rule]]\nafter = \"2h\"\naction = \"log\"\n",
         "gua.toml:1: policy.rule[0].name: every rule needs a name (a non-empty string)"},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"2h\"\naction = \"log\"\nmin_memory = \"8GB\"\n",
         "gua.toml:5: policy.rule[0].min_memory: expected a memory size such as \"8GiB\""},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"2h\"\naction = \"log\"\nusers = \"bob\"\n",
         "gua.toml:5: policy.rule[0].users: expected a list of strings"},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"2h\"\naction = \"log\"\nwhen = 1\n",
         "gua.toml:5: policy.rule[0].when: unknown key"},
        {"[[policy.rule]]\nname = \"a\"\nafter = \"1h\"\naction = \"log\"\n"
         "[[policy.rule]]\nname = \"a\"\nafter = \"2h\"\naction = \"log\"\n",
         "gua.toml:5: policy.rule[1].name: duplicate rule name \"a\""},
    };
    for (const BadCase& c : cases) {
        const Result<Config> r = parse_config(c.toml, "gua.toml");
        ASSERT_FALSE(r.ok()) << c.toml;
        EXPECT_EQ(r.error().message, c.error);
    }
}

TEST(PolicyConfig, MemorySizes) {
    EXPECT_EQ(policy::parse_memory_mib("8GiB").value(), 8192);
    EXPECT_EQ(policy::parse_memory_mib("1.5GiB").value(), 1536);
    EXPECT_EQ(policy::parse_memory_mib("512MiB").value(), 512);
    EXPECT_EQ(policy::parse_memory_mib("1TiB").value(), 1024 * 1024);
    EXPECT_EQ(policy::parse_memory_mib("300").value(), 300);
    for (const char* bad : {"", "GiB", "8 GiB", "8GB", "-1GiB", "0", "eightGiB", "nanGiB"}) {
        EXPECT_FALSE(policy::parse_memory_mib(bad).ok()) << bad;
    }
}

} // namespace
} // namespace gua::config

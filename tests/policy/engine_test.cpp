// SPDX-License-Identifier: Apache-2.0
// The pure policy engine: escalation, fires once, exemptions, protection of system users, dry run
// and the rate limit.
#include "policy/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::policy {
namespace engine_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr std::uint32_t k_self = 99999;

Candidate person(std::uint32_t pid, DurationUs idle_us, std::int64_t mib = 8192,
                 std::uint32_t uid = 1500, const std::string& user = "alice") {
    Candidate c;
    c.process = {pid, 1000 + pid};
    c.identity.user = user;
    c.identity.uid = uid;
    c.identity.command = "python3";
    c.owner = user;
    c.gpus = {GpuRef{0, "GPU-aaaa"}};
    c.memory_mib = mib;
    c.idle_us = idle_us;
    return c;
}

Rule rule(const std::string& name, DurationUs after, Action action, bool dry_run = false) {
    Rule r;
    r.name = name;
    r.after_us = after;
    r.action = action;
    r.dry_run = dry_run;
    return r;
}

PolicyConfig enabled(std::vector<Rule> rules) {
    PolicyConfig c;
    c.enabled = true;
    c.rules = std::move(rules);
    return c;
}

std::vector<std::string> names(const std::vector<Decision>& ds) {
    std::vector<std::string> out;
    for (const Decision& d : ds) {
        out.push_back(d.rule + ":" + to_string(d.verdict));
    }
    return out;
}

using Names = std::vector<std::string>;

TEST(PolicyEngine, OffUnlessEnabled) {
    PolicyConfig c = enabled({rule("warn", k_us_per_hour, Action::notify)});
    c.enabled = false;
    Engine e(c, k_self);
    EXPECT_TRUE(e.decide({person(10, 5 * k_us_per_hour)}, k_t0).empty());
}

TEST(PolicyEngine, EscalatesInOrderAndFiresOnce) {
    Engine e(enabled({rule("kill", 8 * k_us_per_hour, Action::terminate),
                      rule("warn", 2 * k_us_per_hour, Action::notify)}),
             k_self);
    EXPECT_TRUE(e.decide({person(10, k_us_per_hour)}, k_t0).empty());
    EXPECT_EQ(names(e.decide({person(10, 2 * k_us_per_hour)}, k_t0)), Names{"warn:act"});
    EXPECT_TRUE(e.decide({person(10, 3 * k_us_per_hour)}, k_t0).empty()) << "fires once";
    EXPECT_EQ(names(e.decide({person(10, 8 * k_us_per_hour)}, k_t0)), Names{"kill:act"});
    EXPECT_TRUE(e.decide({person(10, 9 * k_us_per_hour)}, k_t0).empty());
    EXPECT_EQ(names(e.decide({person(11, 9 * k_us_per_hour)}, k_t0)),
              (Names{"warn:act", "kill:act"}))
        << "a long streak seen for the first time escalates in order of `after`";
}

TEST(PolicyEngine, ReusedPidIsAnotherProcess) {
    Engine e(enabled({rule("warn", k_us_per_hour, Action::notify)}), k_self);
    EXPECT_EQ(e.decide({person(10, k_us_per_hour)}, k_t0).size(), 1U);
    Candidate reused = person(10, k_us_per_hour);
    reused.process.start_ticks = 777777;
    EXPECT_EQ(e.decide({reused}, k_t0).size(), 1U);
    e.remember_fired(person(12, 0).process, "warn");
    EXPECT_TRUE(e.decide({person(12, k_us_per_hour)}, k_t0).empty()) << "fired before a restart";
}

TEST(PolicyEngine, MatchListsAndMinimumMemory) {
    Rule r = rule("r", k_us_per_hour, Action::notify);
    r.min_memory_mib = 4096;
    r.users = {"a*"};
    r.commands = {"python*"};
    r.gpus = {"GPU-aa"};
    Engine e(enabled({r}), k_self);
    EXPECT_TRUE(e.decide({person(101, k_us_per_hour, 2048)}, k_t0).empty());
    EXPECT_TRUE(e.decide({person(2, k_us_per_hour, 8192, 1500, "bob")}, k_t0).empty());
    Candidate unknown_memory = person(3, k_us_per_hour);
    unknown_memory.memory_mib.reset();
    EXPECT_TRUE(e.decide({unknown_memory}, k_t0).empty());
    Candidate other_gpu = person(4, k_us_per_hour);
    other_gpu.gpus = {GpuRef{1, "GPU-bbbb"}};
    EXPECT_TRUE(e.decide({other_gpu}, k_t0).empty());
    EXPECT_EQ(e.decide({person(5, k_us_per_hour)}, k_t0).size(), 1U);

    Rule by_group = rule("g", 0, Action::log);
    by_group.groups = {"students"};
    by_group.containers = {"c0ffee"};
    Engine g(enabled({by_group}), k_self);
    Candidate student = person(6, k_us_per_hour);
    student.groups = {"users", "students"};
    EXPECT_TRUE(g.decide({student}, k_t0).empty()) << "not in a container";
    student.identity.container_id = "c0ffee0123456789";
    EXPECT_EQ(g.decide({student}, k_t0).size(), 1U);
}

TEST(PolicyEngine, ExemptionsAreRecordedOnceAndNeverAct) {
    PolicyConfig c = enabled({rule("kill", k_us_per_hour, Action::terminate)});
    c.exempt_users = {"alice"};
    c.exempt_commands = {"Xorg"};
    c.exempt_containers = {"deadbeef"};
    Engine e(c, k_self);
    Candidate by_command = person(2, k_us_per_hour, 8192, 1501, "bob");
    by_command.identity.command = "Xorg";
    Candidate by_container = person(3, k_us_per_hour, 8192, 1502, "carol");
    by_container.identity.container_id = "deadbeefcafe";
    const std::vector<Decision> ds =
        e.decide({person(101, k_us_per_hour), by_command, by_container}, k_t0);
    EXPECT_EQ(names(ds), (Names{"kill:exempt", "kill:exempt", "kill:exempt"}));
    EXPECT_EQ(ds[0].reason, "exempt user alice");
    EXPECT_EQ(ds[1].reason, "exempt command Xorg");
    EXPECT_EQ(ds[2].reason, "exempt container deadbeefcafe");
    EXPECT_TRUE(e.decide({person(101, 2 * k_us_per_hour)}, k_t0).empty());
}

TEST(PolicyEngine, SystemUsersOnlyWhenNamedExplicitly) {
    const Candidate root = person(20, k_us_per_hour, 8192, 0, "root");
    Candidate daemon = person(21, k_us_per_hour, 8192, 999, "triton");
    Candidate sudo = person(22, k_us_per_hour, 8192, 0, "alice");
    sudo.owner = "root";
    Candidate unknown_uid = person(23, k_us_per_hour);
    unknown_uid.identity.uid.reset();
    Engine any(enabled({rule("kill", k_us_per_hour, Action::terminate)}), k_self);
    EXPECT_EQ(names(any.decide({root, daemon, sudo, unknown_uid}, k_t0)),
              (Names{"kill:protected", "kill:protected", "kill:protected", "kill:protected"}));

    Rule glob = rule("kill", k_us_per_hour, Action::terminate);
    glob.users = {"*"};
    Engine by_glob(enabled({glob}), k_self);
    EXPECT_EQ(names(by_glob.decide({root}, k_t0)), Names{"kill:protected"})
        << "a pattern is not naming";

    Rule named = rule("kill", k_us_per_hour, Action::terminate);
    named.users = {"root", "triton"};
    Engine by_name(enabled({named}), k_self);
    EXPECT_EQ(names(by_name.decide({root, daemon}, k_t0)), (Names{"kill:act", "kill:act"}));
}

TEST(PolicyEngine, NeverItselfNorInitNorWithoutStartTime) {
    Engine e(enabled({rule("kill", 0, Action::terminate)}), k_self);
    Candidate no_start = person(30, k_us_per_hour);
    no_start.process.start_ticks.reset();
    const std::vector<Decision> ds =
        e.decide({person(k_self, k_us_per_hour), person(1, k_us_per_hour), no_start}, k_t0);
    EXPECT_EQ(names(ds), (Names{"kill:protected", "kill:protected", "kill:protected"}));
}

TEST(PolicyEngine, DryRunRecordsWithoutCountingAsAnAction) {
    PolicyConfig c = enabled({rule("kill", k_us_per_hour, Action::terminate, true)});
    c.max_actions_per_hour = 1;
    Engine e(c, k_self);
    EXPECT_EQ(names(e.decide({person(101, k_us_per_hour), person(102, k_us_per_hour)}, k_t0)),
              (Names{"kill:dry-run", "kill:dry-run"}));
}

TEST(PolicyEngine, RateLimitHoldsAndRetriesLater) {
    PolicyConfig c = enabled(
        {rule("warn", k_us_per_hour, Action::notify), rule("note", k_us_per_hour, Action::log)});
    c.max_actions_per_hour = 2;
    Engine e(c, k_self);
    const std::vector<Candidate> three{person(101, 3 * k_us_per_hour),
                                       person(102, 2 * k_us_per_hour), person(103, k_us_per_hour)};
    const std::vector<Decision> first = e.decide(three, k_t0);
    EXPECT_EQ(names(first), (Names{"warn:act", "note:act", "warn:act", "note:act",
                                   "warn:rate-limited", "note:act"}))
        << "worst first; log actions are not limited";
    EXPECT_EQ(first[4].candidate.process.pid, 103U);
    EXPECT_TRUE(e.decide(three, k_t0 + 30 * k_us_per_minute).empty())
        << "the rate-limited decision is recorded once";
    const std::vector<Decision> later = e.decide(three, k_t0 + k_us_per_hour + 1);
    EXPECT_EQ(names(later), Names{"warn:act"});
    EXPECT_EQ(later[0].candidate.process.pid, 103U);
}

TEST(PolicyEngine, RateLimitRemembersActionsBeforeARestart) {
    PolicyConfig c = enabled({rule("warn", k_us_per_hour, Action::notify)});
    c.max_actions_per_hour = 1;
    Engine e(c, k_self);
    e.remember_action(k_t0 - 10 * k_us_per_minute);
    EXPECT_EQ(names(e.decide({person(101, k_us_per_hour)}, k_t0)), Names{"warn:rate-limited"});
    EXPECT_EQ(names(e.decide({person(101, k_us_per_hour)}, k_t0 + 51 * k_us_per_minute)),
              Names{"warn:act"});
}

TEST(PolicyEngine, ZeroActionsPerHourOnlyRecords) {
    PolicyConfig c = enabled({rule("warn", 0, Action::notify)});
    c.max_actions_per_hour = 0;
    Engine e(c, k_self);
    EXPECT_EQ(names(e.decide({person(101, k_us_per_hour)}, k_t0)), Names{"warn:rate-limited"});
}

} // namespace engine_test
} // namespace gua::policy

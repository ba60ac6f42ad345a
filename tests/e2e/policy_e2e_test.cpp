// SPDX-License-Identifier: Apache-2.0
// Policy end to end: the real daemon on the fake NVML acting on real processes started under other
// uids — notify fires once with the right environment, terminate ends the right process only,
// dry run records without acting, and the rate limit holds.
#include "e2e/policy_harness.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace gua::policy_e2e {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t k_s = k_us_per_second;

std::map<std::string, std::string> env_file(const std::string& path) {
    std::map<std::string, std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        const std::size_t eq = line.find('=');
        if (eq != std::string::npos) {
            out[line.substr(0, eq)] = line.substr(eq + 1);
        }
    }
    return out;
}

std::vector<std::string> files_starting(const std::string& dir, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().filename().string().starts_with(prefix)) {
            out.push_back(e.path().string());
        }
    }
    return out;
}

std::string notify_config(const Scene& s, const std::string& rules, int per_hour = 10) {
    return "[policy]\nenabled = true\nmax_actions_per_hour = " + std::to_string(per_hour) +
           "\nnotify_command = \"env | grep '^GUA_' | sort > " + s.dir().path() +
           "/notify-$GUA_PID-$$.env\"\n" + rules;
}

TEST(PolicyE2E, NotifyFiresOnceAtTheRightTimeWithTheFacts) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write(notify_config(s, "[[policy.rule]]\nname = \"warn\"\nafter = \"3s\"\n"
                             "action = \"notify\"\ndry_run = false\n"));
    auto daemon = s.start_daemon();
    ASSERT_TRUE(
        eventually([&] { return s.scalar("SELECT count(*) FROM policy_decision") > 0; }, 20s))
        << s.log();
    std::this_thread::sleep_for(3s); // it must not fire again
    Scene::stop_daemon(*daemon);

    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision"), 1);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE rule = 'warn' AND "
                       "action = 'notify' AND dry_run = 0 AND outcome = 'notified' AND pid = " +
                       std::to_string(alice->pid())),
              1);
    // At the right time: the first tick whose streak reached 3 s (ticks are ~1 s).
    const std::int64_t idle = s.scalar("SELECT idle_us FROM policy_decision");
    EXPECT_GE(idle, 3 * k_s);
    EXPECT_LT(idle, 4 * k_s + k_s / 2);
    const std::int64_t first_tick = s.scalar("SELECT min(t0_us) FROM card_tick");
    const std::int64_t fired = s.scalar("SELECT time_us FROM policy_decision");
    EXPECT_GE(fired - first_tick, 3 * k_s);
    EXPECT_LT(fired - first_tick, 5 * k_s + k_s / 2);

    ASSERT_TRUE(
        eventually([&] { return files_starting(s.dir().path(), "notify-").size() == 1; }, 5s));
    const auto env = env_file(files_starting(s.dir().path(), "notify-")[0]);
    EXPECT_EQ(env.at("GUA_PID"), std::to_string(alice->pid()));
    EXPECT_EQ(env.at("GUA_USER"), label(1500));
    EXPECT_EQ(env.at("GUA_UID"), "1500");
    EXPECT_EQ(env.at("GUA_GPU"), "0");
    EXPECT_EQ(env.at("GUA_GPU_UUID"), "GPU-00000000-0000-0000-0000-000000000000");
    EXPECT_EQ(env.at("GUA_MEMORY_MIB"), "8192");
    EXPECT_EQ(env.at("GUA_RULE"), "warn");
    EXPECT_EQ(env.at("GUA_ACTION"), "notify");
    EXPECT_EQ(env.at("GUA_COMMAND"), "sleep");
    EXPECT_EQ(env.at("GUA_IDLE_SECONDS"), std::to_string(idle / k_s));
    EXPECT_NE(env.at("GUA_MESSAGE").find("has held 8.0 GiB on GPU 0 idle"), std::string::npos);
    EXPECT_TRUE(alice->running()) << "notify never signals";
}

TEST(PolicyE2E, TerminateEndsTheRightProcessOnly) {
    GUA_REQUIRE_ROOT();
    Scene s;
    const std::string keepalive = s.sleep_named("keepalive");
    auto target = start_as(1500, "/bin/sleep", {"60"});
    auto exempt_user = start_as(1501, "/bin/sleep", {"60"});
    auto exempt_command = start_as(1500, keepalive, {"60"});
    auto root = start_as(0, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(target->pid(), "sleep"));
    ASSERT_TRUE(wait_for_comm(exempt_user->pid(), "sleep"));
    ASSERT_TRUE(wait_for_comm(exempt_command->pid(), "keepalive"));
    s.hold(target->pid(), 8192);
    s.hold(exempt_user->pid(), 4096);
    s.hold(exempt_command->pid(), 2048, 1);
    s.hold(root->pid(), 1024, 1);
    s.write("[policy]\nenabled = true\nexempt_users = [\"" + label(1501) +
            "\"]\nexempt_commands = [\"keepalive\"]\n"
            "[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\naction = \"terminate\"\n"
            "dry_run = false\ngrace = \"2s\"\n");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'released'") == 1;
        },
        25s))
        << s.log();
    Scene::stop_daemon(*daemon);

    const pid_t target_pid = target->pid();
    const std::optional<int> status = target->wait_exit(5s);
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM);
    EXPECT_TRUE(exempt_user->running());
    EXPECT_TRUE(exempt_command->running());
    EXPECT_TRUE(root->running());
    const auto outcome = [&](pid_t pid) {
        return s.scalar("SELECT count(*) FROM policy_decision WHERE pid = " + std::to_string(pid));
    };
    EXPECT_EQ(outcome(target_pid), 1);
    EXPECT_EQ(
        s.scalar("SELECT count(*) FROM policy_decision WHERE verdict = 'exempt' AND pid IN (" +
                 std::to_string(exempt_user->pid()) + "," + std::to_string(exempt_command->pid()) +
                 ")"),
        2);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE verdict = 'protected' AND "
                       "pid = " +
                       std::to_string(root->pid())),
              1);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision"), 4);
    EXPECT_GT(s.scalar("SELECT reclaimed_gib_hours * 1e6 FROM policy_decision WHERE "
                       "outcome = 'released'"),
              0);
    const test::RunResult report = test::run_gua({"report", "--db", s.db(), "--since", "1h"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find("\nPolicy\n"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("1 termination that released memory"), std::string::npos);
}

TEST(PolicyE2E, DryRunRecordsWithoutActing) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("[policy]\nenabled = true\n[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\n"
            "action = \"terminate\"\ngrace = \"1s\"\n");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(
        eventually([&] { return s.scalar("SELECT count(*) FROM policy_decision") > 0; }, 20s))
        << s.log();
    std::this_thread::sleep_for(3s);
    Scene::stop_daemon(*daemon);
    EXPECT_TRUE(alice->running());
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE dry_run = 1 AND "
                       "verdict = 'dry-run' AND outcome = 'dry-run'"),
              1);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision"), 1);
}

TEST(PolicyE2E, RateLimitHolds) {
    GUA_REQUIRE_ROOT();
    Scene s;
    std::vector<std::unique_ptr<Child>> users;
    for (int i = 0; i < 3; ++i) {
        users.push_back(start_as(1500, "/bin/sleep", {"60"}));
        ASSERT_TRUE(wait_for_comm(users.back()->pid(), "sleep"));
        s.hold(users.back()->pid(), 1024 * (i + 1));
    }
    s.write(notify_config(s,
                          "[[policy.rule]]\nname = \"warn\"\nafter = \"2s\"\n"
                          "action = \"notify\"\ndry_run = false\n",
                          1));
    auto daemon = s.start_daemon();
    ASSERT_TRUE(
        eventually([&] { return s.scalar("SELECT count(*) FROM policy_decision") >= 3; }, 20s))
        << s.log();
    std::this_thread::sleep_for(3s);
    Scene::stop_daemon(*daemon);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'notified'"), 1);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'rate-limited'"), 2);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision"), 3) << "recorded once each";
    EXPECT_EQ(s.scalar("SELECT pid FROM policy_decision WHERE outcome = 'notified'"),
              users[2]->pid())
        << "the largest idle-held memory first";
    EXPECT_EQ(files_starting(s.dir().path(), "notify-").size(), 1U);
}

} // namespace
} // namespace gua::policy_e2e

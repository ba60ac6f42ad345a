// SPDX-License-Identifier: Apache-2.0
// A real pid reuse under the running daemon: the recorded process exits and a new one is created
// with the same pid (clone3 with set_tid, which needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; the
// test skips where the kernel refuses). The new process must not inherit the old one's streak.
#include "e2e/policy_harness.hpp"
#include "policy/process_handle.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <linux/sched.h>
#include <sys/syscall.h>

namespace gua::policy_e2e {
namespace {

using namespace std::chrono_literals;

/// Starts `argv` as a child whose pid is exactly `pid`; -1 (errno set) when that is not possible.
pid_t spawn_with_pid(pid_t pid, const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    clone_args ca{};
    ca.exit_signal = SIGCHLD;
    ca.set_tid = reinterpret_cast<std::uint64_t>(&pid);
    ca.set_tid_size = 1;
    const long r = ::syscall(SYS_clone3, &ca, sizeof ca);
    if (r == 0) {
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    return static_cast<pid_t>(r);
}

std::uint64_t start_of(pid_t pid) {
    return policy::read_proc_state("/proc", static_cast<std::uint32_t>(pid)).value().start_ticks;
}

TEST(PolicyE2E, AReusedPidDoesNotInheritTheStreak) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto first = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(first->pid(), "sleep"));
    const pid_t pid = first->pid();
    const std::uint64_t first_start = start_of(pid);
    s.hold(pid, 8192);
    s.write("[policy]\nenabled = true\n[[policy.rule]]\nname = \"reclaim\"\nafter = \"8s\"\n"
            "action = \"terminate\"\ndry_run = false\ngrace = \"1s\"\n");
    auto daemon = s.start_daemon();
    const std::string rows = "SELECT count(*) FROM proc_tick p JOIN process pr ON "
                             "pr.id = p.process_id WHERE pr.pid = " +
                             std::to_string(pid);
    ASSERT_TRUE(eventually([&] { return s.scalar(rows) >= 3; }, 20s)) << s.log();

    first->kill_and_reap();
    const pid_t again = spawn_with_pid(pid, {"/usr/bin/setpriv", "--reuid=1500", "--regid=1500",
                                             "--clear-groups", "/bin/sleep", "60"});
    if (again < 0) {
        const int err = errno;
        Scene::stop_daemon(*daemon);
        GTEST_SKIP() << "clone3(set_tid) refused: " << std::strerror(err);
    }
    ASSERT_EQ(again, pid);
    auto second = Child::adopt(again);
    const TimeUs reused_at = wall_now();
    ASSERT_TRUE(wait_for_comm(pid, "sleep"));
    const std::uint64_t second_start = start_of(pid);
    ASSERT_NE(second_start, first_start);

    // Later the new process is judged on its own streak, keyed by its own start time.
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'released'") > 0;
        },
        25s))
        << s.log();
    Scene::stop_daemon(*daemon);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE start_ticks = " +
                       std::to_string(first_start)),
              0);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE start_ticks = " +
                       std::to_string(second_start)),
              1);
    // Its first tick may have started up to one tick before the reuse (the tick is whole).
    EXPECT_GE(s.scalar("SELECT time_us FROM policy_decision"), reused_at + 7 * k_us_per_second)
        << "the first process's streak would have fired about 5 s after the reuse";
    EXPECT_GE(s.scalar("SELECT idle_us FROM policy_decision"), 8 * k_us_per_second);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'released'"), 1)
        << "the new process was terminated by its own decision: " << s.log();
}

} // namespace
} // namespace gua::policy_e2e

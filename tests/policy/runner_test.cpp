// SPDX-License-Identifier: Apache-2.0
// PolicyRunner on hand-built ticks naming real child processes: SIGTERM → grace → SIGKILL →
// memory released, the pid-reuse guard, notify failures, and state surviving a restart.
#include "identity/user.hpp"
#include "policy/process_handle.hpp"
#include "policy/runner.hpp"
#include "policy/support.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gua::policy {
namespace runner_test { // named after the file: unique in a unity batch

using policy_test::Child;

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

std::uint64_t start_of(pid_t pid) {
    return read_proc_state("/proc", static_cast<std::uint32_t>(pid)).value().start_ticks;
}

std::string me() {
    return identity::user_label(::getuid(), identity::passwd_name(::getuid()));
}

Rule rule(const std::string& name, DurationUs after, Action action) {
    Rule r;
    r.name = name;
    r.after_us = after;
    r.action = action;
    r.dry_run = false;
    r.grace_us = 0;
    r.users = {me()};
    return r;
}

struct Fixture {
    policy_test::TempDir dir;
    store::Database db{dir.file("gua.db"), store::OpenMode::create};
    std::vector<std::string> lines;

    Fixture() { store::migrate(db); }
    std::unique_ptr<PolicyRunner> runner(std::vector<Rule> rules, std::string notify = "") {
        PolicyConfig c;
        c.enabled = true;
        c.rules = std::move(rules);
        c.notify_command = std::move(notify);
        RunnerOptions o;
        o.utmp_path = dir.file("no-utmp");
        o.self_pid = static_cast<std::uint32_t>(::getpid());
        return std::make_unique<PolicyRunner>(
            db, c, audit::Thresholds{}, [this](const std::string& l) { lines.push_back(l); }, o);
    }
    telemetry::Tick idle_tick(int i, pid_t pid, std::uint64_t start) const {
        return policy_test::tick(
            static_cast<std::uint64_t>(i), k_t0 + i * k_s, k_s,
            {policy_test::card(0, 0, k_s,
                               {policy_test::process(static_cast<std::uint32_t>(pid), start, 8192,
                                                     0.0, me(), ::getuid())})});
    }
    telemetry::Tick empty_tick(int i) const {
        return policy_test::tick(static_cast<std::uint64_t>(i), k_t0 + i * k_s, k_s,
                                 {policy_test::card(0, 0, k_s, {})});
    }
    std::string outcomes() {
        std::string out;
        store::Statement st = db.prepare("SELECT rule || ':' || outcome FROM policy_decision "
                                         "ORDER BY id");
        while (st.step()) {
            out += (out.empty() ? "" : " ") + st.text(0);
        }
        return out;
    }
};

/// Waits (up to 10 s) until `pid` runs the program `comm`: a shell that set up its traps and
/// exec'ed. False when it never does.
bool wait_for_exec(pid_t pid, const std::string& comm) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
        std::string name;
        if (std::getline(in, name) && name == comm) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

/// A signal set of /proc/<pid>/status ("SigIgn", "SigPnd", "ShdPnd"), 0 when it cannot be read.
std::uint64_t signal_set(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(field + ":")) {
            return std::stoull(line.substr(field.size() + 1), nullptr, 16);
        }
    }
    return 0;
}

/// Waits (up to 10 s) until one of this process's children has exited, without reaping it (the
/// runner reaps its own): a notify command that finished. False when none does.
bool wait_for_exited_child() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

constexpr std::uint64_t k_sigterm_bit = std::uint64_t{1} << (SIGTERM - 1);

TEST(PolicyRunner, TerminatesWithGraceThenKillAndVerifiesRelease) {
    Fixture f;
    Child child({"/bin/sh", "-c", "trap '' TERM; exec /bin/sleep 60"});
    ASSERT_GT(child.pid(), 0);
    // The ignored SIGTERM is installed before the exec, and survives it.
    ASSERT_TRUE(wait_for_exec(child.pid(), "sleep"));
    const std::uint64_t start = start_of(child.pid());
    auto runner = f.runner({rule("reclaim", 0, Action::terminate)});
    runner->start(k_t0);
    runner->on_tick(f.idle_tick(0, child.pid(), start), k_t0 + k_s);
    EXPECT_EQ(f.outcomes(), "reclaim:sigterm-sent");
    // The child ignores SIGTERM (the kernel discards it): it is still running, whenever we look.
    EXPECT_NE(signal_set(child.pid(), "SigIgn") & k_sigterm_bit, 0U);
    EXPECT_TRUE(child.running()) << "SIGTERM is ignored by this child";
    runner->on_tick(f.idle_tick(1, child.pid(), start), k_t0 + 2 * k_s);
    EXPECT_EQ(f.outcomes(), "reclaim:sigkill-sent");
    for (int i = 0; i < 500 && child.running(); ++i) {
        ::usleep(10000);
    }
    runner->on_tick(f.idle_tick(2, child.pid(), start), k_t0 + 3 * k_s);
    EXPECT_EQ(f.outcomes(), "reclaim:sigkill-sent") << "exited, but the driver still lists it";
    runner->on_tick(f.empty_tick(3), k_t0 + 4 * k_s);
    EXPECT_EQ(f.outcomes(), "reclaim:released");
    EXPECT_EQ(runner->pending_terminations(), 0U);
    EXPECT_EQ(f.db.scalar("SELECT round(reclaimed_gib_hours * 3600000) FROM policy_decision"), 8000)
        << "8 GiB × 1 s idle-held";
    const std::optional<int> status = child.wait_exit(std::chrono::seconds(5));
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
}

TEST(PolicyRunner, NeverSignalsAReusedPid) {
    Fixture f;
    Child child({"/bin/sleep", "60"});
    const std::uint64_t recorded = start_of(child.pid()) + 1; // the pid now belongs to another
    auto runner = f.runner({rule("reclaim", 0, Action::terminate)});
    runner->start(k_t0);
    runner->on_tick(f.idle_tick(0, child.pid(), recorded), k_t0 + k_s);
    EXPECT_EQ(f.outcomes(), "reclaim:pid-reused");
    // No signal was sent: none is pending, and the child runs on.
    EXPECT_EQ(signal_set(child.pid(), "SigPnd") | signal_set(child.pid(), "ShdPnd"), 0U);
    EXPECT_TRUE(child.running());
    EXPECT_EQ(runner->pending_terminations(), 0U);
}

TEST(PolicyRunner, RecordsAFailingNotifyCommand) {
    Fixture f;
    Child child({"/bin/sleep", "60"});
    auto runner = f.runner({rule("warn", 0, Action::notify)}, "exit 3");
    runner->start(k_t0);
    runner->on_tick(f.idle_tick(0, child.pid(), start_of(child.pid())), k_t0 + k_s);
    EXPECT_EQ(f.outcomes(), "warn:notified");
    ASSERT_TRUE(wait_for_exited_child()) << "the notify command never finished";
    runner->on_tick(f.idle_tick(1, child.pid(), start_of(child.pid())), k_t0 + 2 * k_s);
    EXPECT_EQ(f.outcomes(), "warn:notify-failed");
    EXPECT_EQ(f.db.scalar("SELECT count(*) FROM policy_decision WHERE detail = 'notify command "
                          "exited with status 3'"),
              1);
}

TEST(PolicyRunner, StreaksAndFiredRulesSurviveARestart) {
    Fixture f;
    Child child({"/bin/sleep", "60"});
    const std::uint64_t start = start_of(child.pid());
    const std::vector<Rule> rules{rule("warn", 3 * k_s, Action::log)};
    store::Writer writer(f.db, store::RunInfo{"h", "d", "nvml", k_s, 10.0, k_t0});
    {
        auto first = f.runner(rules);
        first->start(k_t0);
        for (int i = 0; i < 2; ++i) {
            writer.write(f.idle_tick(i, child.pid(), start));
            first->on_tick(f.idle_tick(i, child.pid(), start), k_t0 + (i + 1) * k_s);
        }
        EXPECT_EQ(f.outcomes(), "");
    }
    auto second = f.runner(rules);
    second->start(k_t0 + 10 * k_s);
    writer.write(f.idle_tick(10, child.pid(), start));
    second->on_tick(f.idle_tick(10, child.pid(), start), k_t0 + 11 * k_s);
    EXPECT_EQ(f.outcomes(), "warn:logged") << "2 s before the restart + 1 s after = 3 s";
    EXPECT_EQ(f.db.scalar("SELECT idle_us FROM policy_decision"), 3 * k_s);
    auto third = f.runner(rules);
    third->start(k_t0 + 20 * k_s);
    writer.write(f.idle_tick(20, child.pid(), start));
    third->on_tick(f.idle_tick(20, child.pid(), start), k_t0 + 21 * k_s);
    EXPECT_EQ(f.outcomes(), "warn:logged") << "fired before the restart: not again";
}

} // namespace runner_test
} // namespace gua::policy

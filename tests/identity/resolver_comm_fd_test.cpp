// SPDX-License-Identifier: Apache-2.0
// identity::Resolver's cache on the real procfs, where cached processes are watched through pidfds
// (exits collected once per poll) and their open comm files (read at most once per exec-check
// period): exec, exit and a real reuse of the same pid (clone3 set_tid) are still noticed.
#include "identity/child_process.hpp"
#include "identity/resolver.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <linux/sched.h>
#include <memory>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gua::identity {
namespace {

using testing::ChildProcess;

std::string comm_of(pid_t pid) {
    std::string comm;
    std::ifstream("/proc/" + std::to_string(pid) + "/comm") >> comm;
    return comm;
}

bool wait_for_comm(pid_t pid, const std::string& comm) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        if (comm_of(pid) == comm) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n;
}

/// A shell (comm "sh") that becomes `sleep 30` once `go` exists.
struct ExecingChild {
    explicit ExecingChild(const std::string& go)
        : child({"/bin/sh", "-c",
                 "while [ ! -e " + go + " ]; do sleep 0.01; done; exec /usr/bin/sleep 30"}) {}
    ChildProcess child;
};

std::string temp_dir() {
    char dir[] = "/tmp/gua-comm-fd-XXXXXX";
    return ::mkdtemp(dir) != nullptr ? std::string(dir) : std::string();
}

TEST(IdentityCommFd, ExecIsNoticedOnTheNextLookupWithoutACheckPeriod) {
    const std::string dir = temp_dir();
    ASSERT_FALSE(dir.empty());
    ExecingChild execing(dir + "/go");
    ASSERT_GT(execing.child.pid(), 0);
    ASSERT_TRUE(wait_for_comm(execing.child.pid(), "sh"));
    Resolver resolver("/proc", k_first_person_uid, 0);
    const auto pid = static_cast<std::uint32_t>(execing.child.pid());
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sh");
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sh");
    std::ofstream(dir + "/go").flush();
    const bool exec_done = execing.child.wait_for_comm("sleep");
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(exec_done);
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sleep");
}

// With a check period, a cache hit costs no system call until the period has passed; an exec
// (which destroys the process's GPU contexts anyway) is noticed at the first lookup after it.
TEST(IdentityCommFd, ExecIsNoticedOnceTheCheckPeriodHasPassed) {
    constexpr std::int64_t k_period_us = 300'000;
    const std::string dir = temp_dir();
    ASSERT_FALSE(dir.empty());
    ExecingChild execing(dir + "/go");
    ASSERT_GT(execing.child.pid(), 0);
    ASSERT_TRUE(wait_for_comm(execing.child.pid(), "sh"));
    Resolver resolver("/proc", k_first_person_uid, k_period_us);
    const auto pid = static_cast<std::uint32_t>(execing.child.pid());
    const auto first = std::chrono::steady_clock::now();
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sh");
    std::ofstream(dir + "/go").flush();
    const bool exec_done = execing.child.wait_for_comm("sleep");
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(exec_done);
    resolver.sweep();
    const std::string within = resolver.resolve(pid).identity.command;
    const bool still_within =
        std::chrono::steady_clock::now() - first < std::chrono::microseconds(k_period_us - 50'000);
    if (still_within) {
        EXPECT_EQ(within, "sh") << "a hit inside the period reads nothing";
    }
    std::this_thread::sleep_for(std::chrono::microseconds(k_period_us));
    resolver.sweep();
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sleep");
}

bool pidfds_supported() {
    const long fd = ::syscall(SYS_pidfd_open, ::getpid(), 0U);
    if (fd < 0) {
        return false;
    }
    ::close(static_cast<int>(fd));
    return true;
}

TEST(IdentityCommFd, SweepClosesTheDescriptorsOfGoneProcesses) {
    const std::size_t before = open_fds();
    // The resolver's own epoll instance, then per cached process: comm and (where supported) pidfd.
    const std::size_t per_process = pidfds_supported() ? 2 : 1;
    {
        ChildProcess child({"/usr/bin/sleep", "30"});
        ASSERT_TRUE(child.wait_for_comm("sleep"));
        Resolver resolver;
        const std::size_t idle = open_fds();
        EXPECT_LE(idle, before + 1);
        const auto pid = static_cast<std::uint32_t>(child.pid());
        EXPECT_TRUE(resolver.resolve(pid).start_ticks.has_value());
        EXPECT_EQ(open_fds(), idle + per_process) << "descriptors per cached process";
        resolver.sweep();
        resolver.sweep();
        EXPECT_EQ(resolver.cached_count(), 0u);
        EXPECT_EQ(open_fds(), idle);
        EXPECT_TRUE(resolver.resolve(pid).start_ticks.has_value());
        child.stop();
        resolver.sweep(); // the next tick: the exit is collected at its first lookup
        EXPECT_EQ(resolver.resolve(pid).start_ticks, std::nullopt);
        EXPECT_EQ(resolver.cached_count(), 0u);
        EXPECT_EQ(open_fds(), idle);
    }
    EXPECT_EQ(open_fds(), before);
}

// Exits are collected with one epoll_wait per tick: of many watched processes, exactly the ones
// that exited are dropped, the others stay cached.
TEST(IdentityCommFd, ExitsOfSomeWatchedProcessesAreCollectedInOneRound) {
    std::vector<std::unique_ptr<ChildProcess>> children;
    for (int i = 0; i < 6; ++i) {
        children.push_back(
            std::make_unique<ChildProcess>(std::vector<std::string>{"/usr/bin/sleep", "30"}));
        ASSERT_TRUE(children.back()->wait_for_comm("sleep"));
    }
    Resolver resolver;
    for (const auto& c : children) {
        EXPECT_TRUE(resolver.resolve(static_cast<std::uint32_t>(c->pid())).start_ticks);
    }
    EXPECT_EQ(resolver.cached_count(), 6u);
    std::vector<std::uint32_t> pids;
    for (const auto& c : children) {
        pids.push_back(static_cast<std::uint32_t>(c->pid()));
    }
    children[1]->stop();
    children[4]->stop();
    resolver.sweep();
    // The first lookup of the round collects both exits, whichever pid it asks about.
    EXPECT_TRUE(resolver.resolve(pids[0]).start_ticks);
    EXPECT_EQ(resolver.cached_count(), pidfds_supported() ? 4u : 6u);
    for (std::size_t i = 0; i < pids.size(); ++i) {
        EXPECT_EQ(resolver.resolve(pids[i]).start_ticks.has_value(), i != 1 && i != 4) << i;
    }
    EXPECT_EQ(resolver.cached_count(), 4u);
}

// Within a round, an exit is noticed once notice_exits() was called (the sampler calls it every
// poll), not only after the next sweep().
TEST(IdentityCommFd, AnExitWithinARoundIsNoticedAfterNoticeExits) {
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    const auto pid = static_cast<std::uint32_t>(child.pid());
    Resolver resolver;
    ASSERT_TRUE(resolver.resolve(pid).start_ticks);
    child.stop();
    resolver.notice_exits();
    EXPECT_FALSE(resolver.resolve(pid).start_ticks);
    EXPECT_EQ(resolver.cached_count(), 0u);
}

// The dangerous case for a cache: the same pid, the same comm, another owner, often the same start
// time. clone3 with set_tid (root only) makes the kernel hand out the dead process's pid again.
TEST(IdentityCommFd, RealPidReuseWithTheSameCommIsReResolved) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "clone3 set_tid needs root";
    }
    ChildProcess first({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(first.wait_for_comm("sleep"));
    const pid_t pid = first.pid();
    Resolver resolver;
    const ProcessFacts before = resolver.resolve(static_cast<std::uint32_t>(pid));
    EXPECT_EQ(before.identity.uid, 0u);
    first.stop();

    const long rc = test::spawn_with_pid(pid, {"/usr/bin/setpriv", "--reuid=54321", "--regid=54321",
                                               "--clear-groups", "/usr/bin/sleep", "30"});
    if (rc < 0) {
        GTEST_SKIP() << "clone3 with set_tid refused: " << std::strerror(errno);
    }
    ASSERT_EQ(rc, pid);
    const bool started = wait_for_comm(pid, "sleep");
    resolver.sweep(); // the next tick
    const ProcessFacts after = resolver.resolve(static_cast<std::uint32_t>(pid));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ASSERT_TRUE(started);
    EXPECT_EQ(after.identity.command, "sleep");
    EXPECT_EQ(after.identity.uid, 54321u);
    EXPECT_EQ(after.identity.user, "uid:54321");
    // Both processes usually start within the same clock tick (10 ms), so the start time alone
    // would not tell them apart; the pidfd (or open comm descriptor) of the first one does.
    EXPECT_TRUE(after.start_ticks.has_value());
}

} // namespace
} // namespace gua::identity

// identity::Resolver's cache on the real procfs, where a hit is one pread of the process's open
// comm file: exec, exit and a real reuse of the same pid (clone3 set_tid) are still noticed.
#include "identity/child_process.hpp"
#include "identity/resolver.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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

TEST(IdentityCommFd, ExecIsNoticedOnACacheHit) {
    char dir[] = "/tmp/gua-comm-fd-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string go = std::string(dir) + "/go";
    // A shell (comm "sh") that becomes sleep once the test creates `go`.
    ChildProcess child({"/bin/sh", "-c",
                        "while [ ! -e " + go + " ]; do sleep 0.01; done; exec /usr/bin/sleep 30"});
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(wait_for_comm(child.pid(), "sh"));
    Resolver resolver;
    const auto pid = static_cast<std::uint32_t>(child.pid());
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sh");
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sh");
    std::ofstream(go).flush();
    const bool exec_done = child.wait_for_comm("sleep");
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(exec_done);
    EXPECT_EQ(resolver.resolve(pid).identity.command, "sleep");
}

TEST(IdentityCommFd, SweepClosesTheDescriptorsOfGoneProcesses) {
    const std::size_t before = open_fds();
    {
        ChildProcess child({"/usr/bin/sleep", "30"});
        ASSERT_TRUE(child.wait_for_comm("sleep"));
        Resolver resolver;
        const auto pid = static_cast<std::uint32_t>(child.pid());
        EXPECT_TRUE(resolver.resolve(pid).start_ticks.has_value());
        EXPECT_EQ(open_fds(), before + 1) << "one comm descriptor per cached process";
        resolver.sweep();
        resolver.sweep();
        EXPECT_EQ(resolver.cached_count(), 0u);
        EXPECT_EQ(open_fds(), before);
        EXPECT_TRUE(resolver.resolve(pid).start_ticks.has_value());
        child.stop();
        EXPECT_EQ(resolver.resolve(pid).start_ticks, std::nullopt);
        EXPECT_EQ(open_fds(), before);
    }
    EXPECT_EQ(open_fds(), before);
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

    pid_t tid = pid;
    clone_args args{};
    args.exit_signal = SIGCHLD;
    args.set_tid = reinterpret_cast<std::uintptr_t>(&tid);
    args.set_tid_size = 1;
    const long rc = ::syscall(SYS_clone3, &args, sizeof args);
    if (rc == 0) {
        const char* argv[] = {"/usr/bin/setpriv",
                              "--reuid=54321",
                              "--regid=54321",
                              "--clear-groups",
                              "/usr/bin/sleep",
                              "30",
                              nullptr};
        ::execv(argv[0], const_cast<char* const*>(argv));
        ::_exit(127);
    }
    if (rc < 0) {
        GTEST_SKIP() << "clone3 with set_tid refused: " << std::strerror(errno);
    }
    ASSERT_EQ(rc, pid);
    const bool started = wait_for_comm(pid, "sleep");
    const ProcessFacts after = resolver.resolve(static_cast<std::uint32_t>(pid));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ASSERT_TRUE(started);
    EXPECT_EQ(after.identity.command, "sleep");
    EXPECT_EQ(after.identity.uid, 54321u);
    EXPECT_EQ(after.identity.user, "uid:54321");
    // Both processes usually start within the same clock tick (10 ms), so the start time alone
    // would not tell them apart; the open comm descriptor of the first one does.
    EXPECT_TRUE(after.start_ticks.has_value());
}

} // namespace
} // namespace gua::identity

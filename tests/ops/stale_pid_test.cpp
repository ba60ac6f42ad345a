// SPDX-License-Identifier: Apache-2.0
// End to end: stale pid files (a dead pid, a pid reused by another process, garbage) are
// reported by `gua status`, cleaned up by `gua stop` without signalling anyone, and replaced
// by `gua start`.
#include "ops/harness.hpp"

#include <gtest/gtest.h>

namespace gua::ops::testing {
namespace {

using nlohmann::json;
using StalePidFile = FakeGpuTest;

// A pid that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::_exit(0);
    }
    ::waitpid(pid, nullptr, 0);
    return pid;
}

void write_raw_pid_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

TEST_F(StalePidFile, DeadPidIsReportedAndReplacedByStart) {
    const pid_t dead = dead_pid();
    fs::create_directories(state_dir());
    write_pid_file(pid_file().string(), ProcessId{dead, 12345});
    const GuaRun status = gua("status", {"--format", "json"});
    EXPECT_EQ(status.exit_code, 1);
    EXPECT_EQ(json::parse(status.out)["stale_pid_file"],
              "pid " + std::to_string(dead) + " is not running");
    EXPECT_TRUE(contains(gua("status").out, "stale pid file")) << gua("status").out;

    const GuaRun dry = gua("start", {"--dry-run"}, fake_env());
    EXPECT_TRUE(contains(dry.out, "- remove " + pid_file().string() + " (stale pid file: pid " +
                                      std::to_string(dead) + " is not running)"))
        << dry.out;
    const GuaRun started = start_background();
    ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
    EXPECT_TRUE(contains(started.out, "✓ remove " + pid_file().string())) << started.out;
    const PidFileInfo now = read_pid_file(pid_file().string());
    EXPECT_EQ(now.status, PidFileInfo::Status::running);
    EXPECT_NE(now.id.pid, dead);
    EXPECT_EQ(gua("stop").exit_code, 0);
}

TEST_F(StalePidFile, ReusedPidIsNeverSignalled) {
    // A live process whose pid the file names, with another start time: a reused pid.
    const pid_t other = ::fork();
    if (other == 0) {
        ::pause();
        ::_exit(0);
    }
    const std::optional<ProcessId> live = identify(other);
    ASSERT_TRUE(live);
    adopt(*live);
    fs::create_directories(state_dir());
    write_pid_file(pid_file().string(), ProcessId{other, live->start_ticks + 1});

    const json status = json::parse(gua("status", {"--format", "json"}).out);
    EXPECT_EQ(status["running"], false);
    EXPECT_TRUE(
        contains(status["stale_pid_file"].get<std::string>(), "now belongs to another process"))
        << status.dump(2);
    const GuaRun stopped = gua("stop");
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_TRUE(contains(stopped.out, "gua is not running")) << stopped.out;
    EXPECT_TRUE(contains(stopped.out, "(stale pid file: pid " + std::to_string(other)))
        << stopped.out;
    EXPECT_TRUE(is_alive(*live)) << "gua stop signalled a process that merely reused the pid";
    EXPECT_FALSE(fs::exists(pid_file()));
}

TEST_F(StalePidFile, GarbageIsStale) {
    write_raw_pid_file(pid_file(), "not a pid\n");
    const json status = json::parse(gua("status", {"--format", "json"}).out);
    EXPECT_TRUE(contains(status["stale_pid_file"].get<std::string>(), "is not a gua pid file"));
    EXPECT_EQ(gua("stop").exit_code, 0);
    EXPECT_FALSE(fs::exists(pid_file()));
}

TEST_F(StalePidFile, ExitedDaemonLeavesAStalePidFile) {
    ASSERT_EQ(start_background().exit_code, 0);
    const PidFileInfo info = read_pid_file(pid_file().string());
    ASSERT_EQ(info.status, PidFileInfo::Status::running);
    ::kill(info.id.pid, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (is_alive(info.id) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const json status = json::parse(gua("status", {"--format", "json"}).out);
    EXPECT_EQ(status["running"], false);
    EXPECT_FALSE(status["stale_pid_file"].is_null());
    EXPECT_TRUE(contains(status["database"]["problems"].dump(), "did not stop cleanly"))
        << status.dump(2);
}

} // namespace
} // namespace gua::ops::testing

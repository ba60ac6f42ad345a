// SPDX-License-Identifier: Apache-2.0
// ops::read_pid_file / write_pid_file against real processes, and the database lock probe.
#include "daemon/lock.hpp"
#include "ops/lock_holder.hpp"
#include "ops/pid_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace gua::ops {
namespace {

namespace fs = std::filesystem;

class PidFile : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "gua-pid-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }

  private:
    fs::path m_dir;
};

TEST_F(PidFile, RoundTripsThisProcess) {
    const std::optional<ProcessId> self = identify(::getpid());
    ASSERT_TRUE(self);
    write_pid_file(path("gua.pid"), *self);
    std::ifstream in(path("gua.pid"));
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, std::to_string(::getpid())) << "the first line is the bare pid";
    const PidFileInfo info = read_pid_file(path("gua.pid"));
    EXPECT_EQ(info.status, PidFileInfo::Status::running);
    EXPECT_EQ(info.id.pid, ::getpid());
    EXPECT_EQ(info.id.start_ticks, self->start_ticks);
    EXPECT_TRUE(is_alive(*self));
    EXPECT_GT(start_time(self->start_ticks), 1704067200LL * k_us_per_second);
}

TEST_F(PidFile, MissingFileIsAbsent) {
    EXPECT_EQ(read_pid_file(path("none.pid")).status, PidFileInfo::Status::absent);
}

TEST_F(PidFile, OtherStartTimeIsAReusedPid) {
    write_pid_file(path("gua.pid"), ProcessId{::getpid(), identify(::getpid())->start_ticks + 7});
    const PidFileInfo info = read_pid_file(path("gua.pid"));
    EXPECT_EQ(info.status, PidFileInfo::Status::stale);
    EXPECT_NE(info.reason.find("now belongs to another process"), std::string::npos) << info.reason;
}

TEST_F(PidFile, ZombieHasExited) {
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    const std::optional<ProcessId> id = identify(child);
    ASSERT_TRUE(id);
    // Not reaped yet: a zombie, which must not count as running.
    while (read_process(child)->state != 'Z') {
        ::usleep(1000);
    }
    write_pid_file(path("gua.pid"), *id);
    const PidFileInfo info = read_pid_file(path("gua.pid"));
    EXPECT_EQ(info.status, PidFileInfo::Status::stale);
    EXPECT_EQ(info.reason, "pid " + std::to_string(child) + " has exited");
    EXPECT_TRUE(terminate_and_wait(*id, k_us_per_second));
    ::waitpid(child, nullptr, 0);
    EXPECT_EQ(read_pid_file(path("gua.pid")).reason,
              "pid " + std::to_string(child) + " is not running");
}

TEST_F(PidFile, LockHolderIsFoundInProcLocks) {
    const std::string db = path("gua.db");
    EXPECT_FALSE(database_lock_holder(db));
    {
        daemon::DatabaseLock lock(db);
        EXPECT_EQ(database_lock_holder(db), ::getpid());
    }
    EXPECT_FALSE(database_lock_holder(db));
}

} // namespace
} // namespace gua::ops

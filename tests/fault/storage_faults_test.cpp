// SPDX-License-Identifier: Apache-2.0
// Fault matrix, storage: the disk fills up while the daemon records; the database lies in a
// directory or on a file system the daemon may not write; a reader keeps a read transaction open
// for many ticks.
#include "fault/fault_harness.hpp"

#include <csignal>
#include <sys/stat.h>
#include <thread>

namespace gua::fault {
namespace storage_faults_test { // named after the file: unique in a unity batch

class FaultMatrixStorage : public FaultTest {
  protected:
    /// The one-line error of a command that must not start: exit `code`, one line, no output.
    static void expect_one_line_error(const test::RunResult& r, int code,
                                      const std::string& start) {
        EXPECT_EQ(r.exit_code, code) << r.err;
        EXPECT_TRUE(r.err.starts_with("gua: " + start)) << r.err;
        EXPECT_EQ(test::count_of(r.err, "\n"), 1) << r.err;
    }
};

// The database on a 4 MiB tmpfs that fills up: the ticks that cannot be written are named and
// counted, recording resumes when space returns, and the stop line's row count is the file's.
TEST_F(FaultMatrixStorage, DiskFullLosesNoStoredTickAndRecovers) {
    const Tmpfs small(path("small"), "4m");
    if (!small.mounted()) {
        GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
    }
    write_scenario(two_cards());
    std::vector<std::string> args = daemon_args({"--interval", "100ms"});
    args[2] = path("small/gua.db");
    auto daemon = test::start_gua(args, env(), m_dir.path(), "full");
    ASSERT_TRUE(daemon->wait_for("Z tick 2 ")) << daemon->err();
    fill_file_system(path("small/filler"));
    ASSERT_TRUE(daemon->wait_for("not stored", 30s)) << daemon->err();
    const int failing_at = logged_ticks(daemon->err());
    ASSERT_TRUE(daemon->wait_for("Z tick ", 30s, failing_at + 3)) << "alive while the disk is full";
    std::filesystem::remove(path("small/filler"));
    ASSERT_TRUE(daemon->wait_for("writes succeed again", 30s)) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(10s), 0) << daemon->err();

    const std::string log = daemon->err();
    const test::StopLine stop = test::stop_line(log);
    ASSERT_TRUE(stop.found) << log;
    EXPECT_EQ(stop.ticks, logged_ticks(log));
    EXPECT_GE(stop.not_stored, 1);
    EXPECT_EQ(stop.rows_written, stop.rows_total) << "the file holds every row written";
    EXPECT_EQ(stop.rows_written, 2 * (stop.ticks - stop.not_stored)) << "two cards per stored tick";
    // Moved off the small file system, the file is checked like every other cell's.
    std::filesystem::copy_file(path("small/gua.db"), db());
    EXPECT_EQ(ticks_per_run(), std::vector<std::int64_t>{stop.ticks - stop.not_stored});
    expect_sound_and_consistent();
}

// A directory the daemon's user may not write (root's 0755 directory, daemon run as nobody):
// one line naming the database, and no file left behind.
TEST_F(FaultMatrixStorage, ReadOnlyDirectoryIsOneLineAndCreatesNothing) {
    if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
        GTEST_SKIP() << "needs root and setpriv to run the daemon as another user";
    }
    write_scenario(two_cards());
    ::chmod(m_dir.path().c_str(), 0755);
    std::vector<std::string> args{"--reuid=65534", "--regid=65534", "--clear-groups", GUA_BINARY};
    const std::vector<std::string> daemon = daemon_args({"--interval", "100ms", "--ticks", "2"});
    args.insert(args.end(), daemon.begin(), daemon.end());
    std::map<std::string, std::string> e = env();
    e["HOME"] = m_dir.path();
    const test::RunResult r = test::run("/usr/bin/setpriv", args, e);
    expect_one_line_error(r, 1, "cannot open database " + db());
    EXPECT_FALSE(e2e::file_exists(db()));
    EXPECT_FALSE(e2e::file_exists(db() + "-wal"));
}

// A recorded database on a file system that has become read-only: the daemon refuses it in one
// line (before its first tick, so nothing is lost), and reports still read it.
TEST_F(FaultMatrixStorage, ReadOnlyFileSystemIsRefusedAndStillReadable) {
    const Tmpfs fs(path("ro"), "8m");
    if (!fs.mounted()) {
        GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
    }
    write_scenario(two_cards());
    std::vector<std::string> args = daemon_args({"--interval", "100ms", "--ticks", "3"});
    args[2] = path("ro/gua.db");
    ASSERT_EQ(test::run_gua(args, env()).exit_code, 0);
    ASSERT_TRUE(fs.set_read_only(true));
    const std::string bytes = test::read_text(path("ro/gua.db"));
    const test::RunResult refused = test::run_gua(args, env());
    expect_one_line_error(refused, 1,
                          "cannot open database " + path("ro/gua.db") + ": Read-only file system");
    const test::RunResult report =
        test::run_gua({"report", "--db", path("ro/gua.db"), "--since", "1d", "--format", "json"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_EQ(json::parse(report.out).at("samples"), 6);
    EXPECT_EQ(test::read_text(path("ro/gua.db")), bytes);
    ASSERT_TRUE(fs.set_read_only(false));
}

// A reader keeps one read transaction open across many ticks (an administrator's sqlite3 shell,
// a slow export): its snapshot stays fixed, the daemon keeps writing without an error, and after
// the reader ends every logged tick is in the file.
TEST_F(FaultMatrixStorage, LongReadTransactionBlocksNothing) {
    write_scenario(two_cards());
    auto daemon = start_daemon({"--interval", "100ms"});
    ASSERT_TRUE(daemon->wait_for("Z tick 2 ")) << daemon->err();
    {
        test::RawDb reader(db());
        reader.exec("BEGIN");
        const std::string snapshot = reader.one("SELECT count(*) FROM card_tick");
        const int logged = logged_ticks(daemon->err());
        ASSERT_TRUE(daemon->wait_for("Z tick ", 30s, logged + 15)) << daemon->err();
        EXPECT_EQ(reader.one("SELECT count(*) FROM card_tick"), snapshot);
        reader.exec("COMMIT");
    }
    const int logged = logged_ticks(daemon->err());
    ASSERT_TRUE(daemon->wait_for("Z tick ", 30s, logged + 3)) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(10s), 0) << daemon->err();
    EXPECT_EQ(daemon->err().find("ERROR"), std::string::npos) << daemon->err();
    EXPECT_EQ(ticks_per_run(), std::vector<std::int64_t>{logged_ticks(daemon->err())});
    expect_sound_and_consistent();
}

} // namespace storage_faults_test
} // namespace gua::fault

// SPDX-License-Identifier: Apache-2.0
// End to end: another user (nobody, through setpriv) reads the database a root daemon wrote —
// after a clean stop removed its -wal/-shm files, and while the daemon writes — with `gua report`,
// `gua db check`, `gua db stats` and `gua now --db`, and writes nothing.
#include "e2e/daemon_e2e.hpp"

#include <csignal>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::e2e {
namespace read_only_e2e_test { // named after the file: unique in a unity batch

constexpr const char* k_setpriv = "/usr/bin/setpriv";

class ReadOnlyUserE2E : public DaemonTest {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root to run gua as another user";
        }
        if (::access(k_setpriv, X_OK) != 0) {
            GTEST_SKIP() << "no " << k_setpriv;
        }
        ::umask(022); // the service's files: readable by everyone, writable by root
        ::chmod(m_dir.path().c_str(), 0755);
        const int me = static_cast<int>(getpid());
        write_scenario({{"devices", {{{"util", {{0, 60}}}}, {{"util", {{0, 2}}}}}},
                        {"processes", {holder(0, 8000, 60, me), holder(1, 8000, 0, me)}}});
    }

    /// Runs `gua args…` as uid/gid 65534 without supplementary groups.
    test::RunResult as_nobody(const std::vector<std::string>& args) const {
        std::vector<std::string> full{"--reuid=65534", "--regid=65534", "--clear-groups",
                                      GUA_BINARY};
        full.insert(full.end(), args.begin(), args.end());
        std::map<std::string, std::string> e = env();
        e["HOME"] = m_dir.path();
        e["NO_COLOR"] = "1";
        return test::run(k_setpriv, full, e);
    }

    /// Names of the files in the test directory.
    std::set<std::string> files() const {
        std::set<std::string> out;
        for (const auto& entry : std::filesystem::directory_iterator(m_dir.path())) {
            out.insert(entry.path().filename().string());
        }
        return out;
    }

    /// Card-ticks in the database, counted by a root connection.
    std::int64_t card_ticks() const {
        test::RawDb raw(db());
        return std::stoll(raw.one("SELECT count(*) FROM card_tick"));
    }

    /// The four read commands as nobody; each must succeed, and the report must count `at_least`
    /// card-ticks (exactly `at_least` when `exact`).
    void read_everything(std::int64_t at_least, bool exact) const {
        const test::RunResult report =
            as_nobody({"report", "--db", db(), "--since", "1d", "--format", "json"});
        ASSERT_EQ(report.exit_code, 0) << report.err;
        const json j = json::parse(report.out);
        if (exact) {
            EXPECT_EQ(j.at("samples").get<std::int64_t>(), at_least);
        } else {
            EXPECT_GE(j.at("samples").get<std::int64_t>(), at_least);
        }
        EXPECT_FALSE(j.at("demo_data").get<bool>());

        const test::RunResult check = as_nobody({"db", "check", "--db", db()});
        EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

        const test::RunResult stats = as_nobody({"db", "stats", "--db", db()});
        EXPECT_EQ(stats.exit_code, 0) << stats.err;
        EXPECT_NE(stats.out.find("card-ticks in"), std::string::npos) << stats.out;

        const test::RunResult now = as_nobody({"now", "--db", db(), "--format", "json",
                                               "--nvml-library", fake_library(), "--sample", "1s"});
        EXPECT_EQ(now.exit_code, 0) << now.err;
        for (const test::RunResult* r : {&report, &check, &stats, &now}) {
            EXPECT_EQ(r->err.find("readonly"), std::string::npos) << r->err;
        }
    }
};

TEST_F(ReadOnlyUserE2E, ReadsAStoppedDatabaseWithoutItsWalFiles) {
    const test::RunResult r = run_daemon({"--interval", "100ms", "--ticks", "4", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::int64_t ticks = card_ticks();
    ASSERT_EQ(ticks, 8) << "two cards, four ticks";
    // A clean stop (and the last root connection) removes the WAL files: the failing case.
    ASSERT_FALSE(file_exists(db() + "-wal"));
    ASSERT_FALSE(file_exists(db() + "-shm"));
    const std::set<std::string> before = files();
    const std::string bytes = test::read_text(db());

    read_everything(ticks, true);

    EXPECT_EQ(files(), before) << "the reader created no file";
    EXPECT_EQ(test::read_text(db()), bytes) << "the reader changed no byte";
}

// While the daemon writes, its -wal/-shm exist (root's, mode 0644): the reader uses them and sees
// the ticks that are only in the WAL so far.
TEST_F(ReadOnlyUserE2E, ReadsTheWalOfARunningDaemon) {
    auto daemon = start_daemon({"--interval", "100ms"});
    ASSERT_TRUE(daemon->wait_for("tick 3 ")) << daemon->err();
    ASSERT_TRUE(file_exists(db() + "-wal"));
    ASSERT_TRUE(file_exists(db() + "-shm"));
    const std::int64_t ticks = card_ticks();
    ASSERT_GE(ticks, 8);

    read_everything(ticks, false);

    const test::RunResult now = as_nobody({"now", "--db", db(), "--format", "json"});
    ASSERT_EQ(now.exit_code, 0) << now.err;
    EXPECT_EQ(json::parse(now.out).at("source").at("kind"), "daemon") << now.out;
    EXPECT_TRUE(daemon->running()) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(10s), 0) << daemon->err();
    EXPECT_EQ(daemon->err().find("ERROR"), std::string::npos) << daemon->err();
    EXPECT_GE(card_ticks(), ticks);
}

// A file nobody may not write, in a directory nobody may write (e.g. /tmp): SQLite would create
// -wal/-shm files owned by nobody there; the reader opens the file immutable instead.
TEST_F(ReadOnlyUserE2E, LeavesNoFileInAWritableDirectory) {
    const test::RunResult r = run_daemon({"--interval", "100ms", "--ticks", "2", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ::chmod(m_dir.path().c_str(), 01777);
    const std::set<std::string> before = files();
    read_everything(4, true);
    EXPECT_EQ(files(), before);
}

} // namespace read_only_e2e_test
} // namespace gua::e2e

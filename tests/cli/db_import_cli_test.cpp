// SPDX-License-Identifier: Apache-2.0
// The real binary: `gua import` (summary line, one-line errors) and `gua db stats|check|vacuum|
// backup|upgrade`.
#include "../store/legacy_file.hpp"
#include "../store/prior_art_files.hpp"
#include "../store/schema_eight_file.hpp"
#include "../store/temp_db.hpp"
#include "daemon/lock.hpp"
#include "store/schema.hpp"
#include "support/raw_db.hpp"
#include "support/run.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/wait.h>

namespace gua {
namespace {

struct Output {
    int rc = -1;
    std::string out;
    std::string err;
};

Output run(const testing::TempDir& dir, const std::string& args) {
    const std::string out = dir.file("stdout"), err = dir.file("stderr");
    const int status =
        std::system((std::string(GUA_BINARY) + " " + args + " >" + out + " 2>" + err).c_str());
    return Output{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_text(out),
                  test::read_text(err)};
}

std::size_t lines(const std::string& s) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(ImportCli, ImportsPrintsOneSummaryLineAndThenNothingMore) {
    testing::TempDir dir;
    const std::string old = dir.file("old.db");
    {
        testing::PriorArtDb f(old, testing::PriorVersion::v1_8_fresh);
        f.add_host("oldhost");
        const TimeUs start = 1777593600LL * k_us_per_second;
        testing::fill_workload(f, 2, 200, start, 30 * k_us_per_second, f.add_run(start, 30), 9);
    }
    const std::string db = dir.file("gua.db");
    Output o = run(dir, "import --from gpu-usage-audit " + old + " --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_EQ(lines(o.out), 1U);
    EXPECT_NE(o.out.find("imported 400 card-ticks"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("0 already present"), std::string::npos) << o.out;
    o = run(dir, "import --from gpu-usage-audit " + old + " --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(o.out.find("imported 0 card-ticks"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("400 already present"), std::string::npos) << o.out;

    o = run(dir, "db stats --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(o.out.find("400 card-ticks"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("auto_vacuum incremental"), std::string::npos) << o.out;
    o = run(dir, "db check --db " + db);
    EXPECT_EQ(o.rc, 0) << o.out << o.err;
    const std::string copy = dir.file("copy.db");
    o = run(dir, "db backup " + copy + " --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    o = run(dir, "db check --db " + copy);
    EXPECT_EQ(o.rc, 0) << o.out << o.err;
    o = run(dir, "db stats --db " + copy);
    EXPECT_NE(o.out.find("400 card-ticks"), std::string::npos) << o.out;
    o = run(dir, "db backup " + copy + " --db " + db);
    EXPECT_EQ(o.rc, 2);
    EXPECT_EQ(lines(o.err), 1U) << o.err;
    o = run(dir, "db vacuum --db " + db);
    EXPECT_EQ(o.rc, 0) << o.err;
}

TEST(ImportCli, BadInputIsOneLineAndExitCodeTwo) {
    testing::TempDir dir;
    const std::string text = dir.file("notes.txt");
    std::ofstream(text) << "not a database, not even close; just text long enough to matter\n";
    for (const std::string& args :
         {"import --from gpu-usage-audit " + text + " --db " + dir.file("a.db"),
          "import --from collectd " + text + " --db " + dir.file("a.db"),
          "import --from gpu-usage-audit " + dir.file("missing.db") + " --db " + dir.file("a.db"),
          "import --from gpu-usage-audit " + text + " --interval 30 --db " + dir.file("a.db")}) {
        const Output o = run(dir, args);
        EXPECT_EQ(o.rc, 2) << args << ": " << o.err;
        EXPECT_EQ(lines(o.err), 1U) << args << ": " << o.err;
        EXPECT_TRUE(o.out.empty()) << o.out;
        EXPECT_FALSE(std::filesystem::exists(dir.file("a.db"))) << "rejected: no target left";
    }
}

TEST(DbCli, RejectedCommandsLeaveNoFiles) {
    testing::TempDir dir;
    const std::string missing = dir.file("missing.db");
    Output o = run(dir, "db upgrade --db " + missing);
    EXPECT_EQ(o.rc, 1) << o.err;
    EXPECT_EQ(lines(o.err), 1U) << o.err;
    EXPECT_NE(o.err.find("does not exist"), std::string::npos) << o.err;
    for (const auto& e : std::filesystem::directory_iterator(dir.file(""))) {
        EXPECT_EQ(e.path().filename().string().rfind("missing", 0), std::string::npos)
            << "left behind: " << e.path();
    }
    const std::string db = dir.file("gua.db");
    ASSERT_EQ(run(dir, "demo --quiet --db " + db).rc, 0);
    o = run(dir, "db backup '' --db " + db);
    EXPECT_EQ(o.rc, 2) << o.out << o.err;
    EXPECT_EQ(lines(o.err), 1U) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(DbCli, BackupRefusesTheFilesSqliteOwns) {
    testing::TempDir dir;
    const std::string db = dir.file("gua.db");
    ASSERT_EQ(run(dir, "demo --quiet --db " + db).rc, 0);
    // SQLite deletes a database's -wal when the last connection closes: a "backup" there would
    // vanish; -shm and -journal are its files too, and the source itself is no backup.
    for (const std::string& dest : {db + "-wal", db + "-shm", db + "-journal", db}) {
        const Output o = run(dir, "db backup " + dest + " --db " + db);
        EXPECT_EQ(o.rc, 2) << dest << ": " << o.out << o.err;
        EXPECT_EQ(lines(o.err), 1U) << o.err;
        EXPECT_NE(o.err.find("SQLite"), std::string::npos) << o.err;
        EXPECT_TRUE(o.out.empty()) << o.out;
    }
    EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
    EXPECT_EQ(run(dir, "db check --db " + db).rc, 0);
    // A dangling symlink would be followed by SQLite to create its target.
    std::filesystem::create_symlink(dir.file("elsewhere.db"), dir.file("link.db"));
    const Output o = run(dir, "db backup " + dir.file("link.db") + " --db " + db);
    EXPECT_EQ(o.rc, 2) << o.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("elsewhere.db")));
}

TEST(DbCli, VacuumLeavesAnEmptyFileEmpty) {
    testing::TempDir dir;
    const std::string empty = dir.file("empty.db");
    { std::ofstream created(empty); }
    const Output o = run(dir, "db vacuum --db " + empty);
    EXPECT_EQ(o.rc, 1) << o.err;
    EXPECT_EQ(lines(o.err), 1U) << o.err;
    EXPECT_NE(o.err.find("is not a gua database (it is empty)"), std::string::npos) << o.err;
    EXPECT_EQ(std::filesystem::file_size(empty), 0U);
    EXPECT_FALSE(std::filesystem::exists(empty + "-wal"));
}

TEST(DbCli, AForeignDatabaseIsNamedSoAndLeftUnchanged) {
    testing::TempDir dir;
    const std::string other = dir.file("other.db");
    {
        test::RawDb raw(other);
        raw.exec("CREATE TABLE samples (ts INTEGER); INSERT INTO samples VALUES (1);");
    }
    const auto header = [&] {
        std::ifstream in(other, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {}).substr(0, 100);
    };
    const std::string before = header();
    for (const std::string& args : {"report --db " + other, "db check --db " + other,
                                    "db upgrade --db " + other, "db stats --db " + other}) {
        const Output o = run(dir, args);
        EXPECT_NE(o.rc, 0) << args;
        EXPECT_EQ(lines(o.err), 1U) << args << ": " << o.err;
        EXPECT_NE(o.err.find("not a gua database"), std::string::npos) << args << ": " << o.err;
        EXPECT_EQ(o.err.find("empty"), std::string::npos) << args << ": " << o.err;
    }
    EXPECT_EQ(header(), before);
    EXPECT_FALSE(std::filesystem::exists(other + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(other + ".lock"));
}

TEST(DbCli, CheckFindsACorruptBlock) {
    testing::TempDir dir;
    const std::string db = dir.file("gua.db");
    ASSERT_EQ(run(dir, "demo --quiet --db " + db).rc, 0);
    {
        store::Database d(db, store::OpenMode::read_write);
        d.exec("UPDATE tick_block SET util_cpct = 'Zjunk' WHERE id = (SELECT min(id) FROM "
               "tick_block)");
    }
    const Output o = run(dir, "db check --db " + db);
    EXPECT_EQ(o.rc, 1);
    EXPECT_NE(o.out.find("does not decode"), std::string::npos) << o.out;
}

TEST(DbCli, ReportAsksForTheUpgradeAndUpgradeConvertsAnOldFile) {
    testing::TempDir dir;
    const std::string db = dir.file("old.db");
    testing::write_row_per_tick_file(db);
    const std::string window = " --from 2026-01-05T09:00:00Z --to 2026-01-05T11:00:00Z";
    Output o = run(dir, "report --db " + db + window);
    EXPECT_EQ(o.rc, 1);
    EXPECT_EQ(lines(o.err), 1U) << o.err;
    EXPECT_NE(o.err.find("gua db upgrade"), std::string::npos) << o.err;
    {
        const daemon::DatabaseLock daemon_running(db);
        o = run(dir, "db upgrade --db " + db);
        EXPECT_EQ(o.rc, 4) << "not while a daemon holds the file: " << o.out << o.err;
        EXPECT_EQ(lines(o.err), 1U) << o.err;
    }
    o = run(dir, "db upgrade --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(
        o.out.find(fmt::format("schema 2 → {}, 6 card-ticks converted", store::k_schema_version)),
        std::string::npos)
        << o.out;
    o = run(dir, "report --format json --db " + db + window);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(o.out.find("\"samples\": 6"), std::string::npos) << o.out.substr(0, 400);
    o = run(dir, "db upgrade --db " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(o.out.find(fmt::format("schema {0} → {0}", store::k_schema_version)),
              std::string::npos)
        << "idempotent: " << o.out;
}

TEST(DbCli, UpgradeOfSchemaEightRollupsReturnsTheSpaceAndReportsTheSame) {
    testing::TempDir dir;
    const std::string fresh = dir.file("fresh.db");
    const std::string old = dir.file("old.db");
    ASSERT_EQ(
        run(dir, "demo --quiet --workload overnight --start 2026-01-05T00:00:00Z --db " + fresh).rc,
        0);
    std::filesystem::copy_file(fresh, old);
    {
        store::Database d(old, store::OpenMode::read_write);
        ASSERT_GT(d.scalar("SELECT count(*) FROM rollup_gpu"), 0) << "the demo has rollups";
        testing::make_schema_eight(d);
        d.exec("VACUUM"); // packed as tight as SQLite packs it
    }
    const auto size_before = std::filesystem::file_size(old);
    Output o = run(dir, "db upgrade --db " + old);
    ASSERT_EQ(o.rc, 0) << o.err;
    EXPECT_NE(o.out.find(fmt::format("schema 8 → {}; file ", store::k_schema_version)),
              std::string::npos)
        << o.out;
    // Returned: as small as the same data written by this gua and packed. (Not compared with the
    // schema 8 file itself: on a file this small the pages later schemas add — empty allocation
    // tables, longer view SQL — weigh as much as the BLOBs' savings.)
    const std::string packed = dir.file("packed.db");
    std::filesystem::copy_file(fresh, packed);
    {
        store::Database d(packed, store::OpenMode::read_write);
        d.exec("VACUUM");
    }
    EXPECT_LE(std::filesystem::file_size(old), std::filesystem::file_size(packed)) << o.out;
    EXPECT_LT(std::filesystem::file_size(old) * 2, size_before * 3) << o.out;
    const std::string window = " --from 2026-01-05T00:00:00Z --to 2026-01-12T00:00:00Z";
    o = run(dir, "report --format json --db " + old + window);
    ASSERT_EQ(o.rc, 0) << o.err;
    const Output written = run(dir, "report --format json --db " + fresh + window);
    ASSERT_EQ(written.rc, 0) << written.err;
    EXPECT_EQ(o.out, written.out) << "the same totals as the BLOBs this gua writes";
}

} // namespace
} // namespace gua

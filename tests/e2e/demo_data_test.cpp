// SPDX-License-Identifier: Apache-2.0
// End to end: demo data never mixes with recorded data. `gua demo --db` refuses a database with
// recorded runs, the daemon and `gua import` refuse one with demo runs (one line, exit 2, the file
// unchanged), and reports and `gua db stats` of demo data say so.
#include "../store/prior_art_files.hpp"
#include "e2e/daemon_e2e.hpp"

#include <unistd.h>

namespace gua::e2e {
namespace demo_data_test { // named after the file: unique in a unity batch

class DemoDataE2E : public DaemonTest {
  protected:
    test::RunResult demo(const std::string& path, const std::string& workload = "classic") const {
        return test::run_gua({"demo", "--db", path, "--workload", workload, "--quiet", "--start",
                              "2026-01-05T10:00:00Z", "--format", "json"});
    }
    static void expect_refusal(const test::RunResult& r, const std::string& message) {
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_EQ(r.err, "gua: " + message + "\n");
    }
};

TEST_F(DemoDataE2E, DemoRefusesADatabaseWithRecordedRuns) {
    write_scenario({{"devices", {{{"util", {{0, 50}}}}}}});
    ASSERT_EQ(run_daemon({"--interval", "100ms", "--ticks", "2", "--quiet"}).exit_code, 0);
    const std::string bytes = test::read_text(db());
    const test::RunResult r = demo(db());
    expect_refusal(r, db() + " holds recorded data (1 run, source 'nvml'); demo data never goes "
                             "there (name a new file, or leave out --db)");
    EXPECT_EQ(test::read_text(db()), bytes) << "not a byte changed";
    EXPECT_FALSE(file_exists(db() + "-wal"));
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM run"), "1");
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), "2");
}

TEST_F(DemoDataE2E, DemoRunsAreMarkedInReportsAndStatsAndMayShareAFile) {
    ASSERT_EQ(demo(db()).exit_code, 0);
    const test::RunResult again = demo(db(), "bursty");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(json::parse(again.out).at("demo_data").get<bool>());
    {
        test::RawDb raw(db());
        EXPECT_EQ(raw.one("SELECT group_concat(source, ',') FROM (SELECT source FROM run ORDER "
                          "BY id)"),
                  "synthetic:classic,synthetic:bursty");
    }
    const test::RunResult text = test::run_gua(
        {"report", "--db", db(), "--from", "2026-01-05", "--to", "2026-01-06", "--format", "text"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(text.out.starts_with("gua — demo — demo data (driver ")) << text.out;
    const test::RunResult stats = test::run_gua({"db", "stats", "--db", db()});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.out.find("\ndata         demo data (2 of 2 runs are synthetic workloads of "
                             "`gua demo`)\n"),
              std::string::npos)
        << stats.out;
}

TEST_F(DemoDataE2E, DaemonAndImportRefuseADatabaseWithDemoRuns) {
    ASSERT_EQ(demo(db()).exit_code, 0);
    const std::string bytes = test::read_text(db());
    const std::string message = db() + " holds demo data (1 run of `gua demo`); recorded data "
                                       "never goes there (use another --db)";
    write_scenario({{"devices", {{{"util", {{0, 50}}}}}}});
    expect_refusal(run_daemon({"--interval", "100ms", "--ticks", "1", "--quiet"}), message);

    const std::string old = path("old.db");
    {
        testing::PriorArtDb f(old, testing::PriorVersion::v1_8_fresh);
        f.add_host("oldhost");
        const TimeUs start = 1777593600LL * k_us_per_second;
        testing::fill_workload(f, 1, 10, start, 30 * k_us_per_second, f.add_run(start, 30), 9);
    }
    expect_refusal(test::run_gua({"import", "--from", "gpu-usage-audit", old, "--db", db()}),
                   message);
    EXPECT_EQ(test::read_text(db()), bytes);
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM run WHERE source NOT LIKE 'synthetic:%'"), "0");
}

// A plain recorded database reports no demo data.
TEST_F(DemoDataE2E, RecordedDataIsNotCalledDemo) {
    write_scenario({{"devices", {{{"util", {{0, 50}}}}}}});
    ASSERT_EQ(run_daemon({"--interval", "100ms", "--ticks", "2", "--quiet"}).exit_code, 0);
    EXPECT_FALSE(report().at("demo_data").get<bool>());
    const test::RunResult stats = test::run_gua({"db", "stats", "--db", db()});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_EQ(stats.out.find("demo data"), std::string::npos) << stats.out;
}

} // namespace demo_data_test
} // namespace gua::e2e

// SPDX-License-Identifier: Apache-2.0
// `gua db check` on the per-job summary tables: a database whose retention wrote summaries passes;
// each corruption of allocation_summary / allocation_summarized, and spans of one job that
// overlap on a card (counted twice by `gua job`), is named in one line (the allocation, its job
// id), and the real binary exits 1 on it.
#include "store/maintenance.hpp"
#include "store/retention.hpp"
#include "support/run.hpp"
#include "temp_db.hpp"
#include "two_card_recording.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace gua::store {
namespace job_summary_check_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // an hour boundary
constexpr DurationUs k_tick = 60 * k_us_per_second;
constexpr int k_ticks = 180;     // three hours
constexpr int k_job_ticks = 100; // job 7 holds card 0 over ticks 0–99, whole ticks
// Job 7's span on card 0, integrated from the scenario.
constexpr DurationUs k_job_us = k_job_ticks * k_tick;

/// Card 0 (allocated to job 7 for its first 100 ticks) and card 1, both idle with no process.
telemetry::CardTickRecord card(int index, TimeUs t0, int k) {
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{
        index == 0 ? "GPU-a" : "GPU-b", index, "NVIDIA H100 80GB HBM3", 81559, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 0;
    c.active_us = 0;
    c.bucket_us = {k_tick, 0, 0, 0};
    c.idle_unlisted_us = k_tick;
    if (index == 0 && k < k_job_ticks) {
        c.allocation = telemetry::AllocationTimes{k_tick, 0, 0, k_tick, 0, 0};
        c.allocations = {
            telemetry::AllocationOwner{"slurm-job", "7", "alice", "physics", t0, t0 + k_tick}};
    }
    return c;
}

/// Three hours recorded, then retention keeps one hour of raw card-ticks: job 7's are all gone,
/// its figures kept in its summary.
void record(Database& db) {
    testing::record_two_cards(db, k_start, k_tick, k_ticks, card);
    Retention r(db, RetentionPolicy{k_us_per_hour, std::nullopt});
    r.run_to_completion(k_start + k_ticks * k_tick + k_us_per_minute);
}

/// The one problem check_database finds after `sql` corrupts a recorded database; it must name
/// job 7 and contain `says`.
void expect_one_finding(const std::string& sql, const std::string& says) {
    testing::TempDb t;
    record(t.db);
    t.db.exec(sql);
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_EQ(problems.size(), 1U) << sql << (problems.empty() ? "" : "\n" + problems[0]);
    EXPECT_NE(problems[0].find("(slurm-job 7)"), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find(says), std::string::npos) << problems[0];
    EXPECT_EQ(problems[0].find('\n'), std::string::npos) << problems[0];
}

TEST(JobSummaryCheck, ADatabaseWithSummariesPasses) {
    testing::TempDb t;
    record(t.db);
    ASSERT_EQ(t.db.scalar("SELECT count(*) FROM allocation_summarized"), 1);
    ASSERT_EQ(t.db.scalar("SELECT count(*) FROM allocation_summary"), 1);
    // The summary holds job 7's whole span, all of it unused (its ticks are gone).
    EXPECT_EQ(t.db.scalar("SELECT allocated_us FROM allocation_summary"), k_job_us);
    EXPECT_EQ(t.db.scalar("SELECT unused_us FROM allocation_summary"), k_job_us);
    EXPECT_EQ(check_database(t.db), std::vector<std::string>{});
}

TEST(JobSummaryCheck, CardFiguresWithoutTheirSummarizedRowAreNamed) {
    expect_one_finding("DELETE FROM allocation_summarized", "has no allocation_summarized row");
}

// Summaries of an allocation or a card the database does not know: the foreign-key check.
TEST(JobSummaryCheck, ASummaryOfAnUnknownAllocationOrCardIsNamed) {
    for (const char* sql : {"UPDATE allocation_summary SET gpu_id = 999",
                            "UPDATE allocation_summarized SET allocation_id = 999"}) {
        testing::TempDb t;
        record(t.db);
        t.db.exec("PRAGMA foreign_keys = OFF"); // as a damaged or hand-edited file could be
        t.db.exec(sql);
        const std::vector<std::string> problems = check_database(t.db);
        ASSERT_EQ(problems.size(), 1U) << sql;
        EXPECT_TRUE(problems[0].starts_with("foreign key: allocation_summar")) << problems[0];
        EXPECT_NE(problems[0].find(std::string(sql).find("gpu") != std::string::npos
                                       ? "missing gpu"
                                       : "missing allocation"),
                  std::string::npos)
            << problems[0];
    }
}

TEST(JobSummaryCheck, ANegativeFigureIsNamed) {
    expect_one_finding("UPDATE allocation_summary SET energy_j = -1", "negative figure");
    expect_one_finding("UPDATE allocation_summary SET measured_us = -5", "negative figure");
}

TEST(JobSummaryCheck, APeakUtilizationAboveAHundredPercentIsNamed) {
    expect_one_finding("UPDATE allocation_summary SET peak_sm_pct = 140", "outside 0–100 %");
}

TEST(JobSummaryCheck, PartsBeyondTheAllocatedTimeAreNamed) {
    // Unused is the whole allocated time already: one µs of active time more does not fit.
    expect_one_finding(
        "UPDATE allocation_summary SET active_us = 1",
        fmt::format("splits {} µs of allocated time into {} µs", k_job_us, k_job_us + 1));
}

TEST(JobSummaryCheck, AllocatedTimeBeyondTheSpansIsNamed) {
    const DurationUs more = k_job_us + k_tick;
    expect_one_finding(
        fmt::format("UPDATE allocation_summary SET allocated_us = {0}, unused_us = {0}", more),
        fmt::format("counts {} µs of allocated time but the allocation's spans on the card last "
                    "{} µs",
                    more, k_job_us));
}

TEST(JobSummaryCheck, ASummaryOnACardTheAllocationNeverHeldIsNamed) {
    expect_one_finding(
        "UPDATE allocation_summary SET gpu_id = (SELECT id FROM gpu WHERE uuid = 'GPU-b')",
        "spans on the card last 0 µs");
}

TEST(JobSummaryCheck, ImpossibleThresholdsAreNamed) {
    expect_one_finding("UPDATE allocation_summarized SET active_util_pct = 150",
                       "impossible thresholds");
    expect_one_finding("UPDATE allocation_summarized SET held_mib = -1", "impossible thresholds");
}

TEST(JobSummaryCheck, TwoSpansOfOneAllocationOverlappingOnACardAreNamed) {
    expect_one_finding("INSERT INTO allocation_span (allocation_id, gpu_id, run_id, begin_us, "
                       "end_us) SELECT allocation_id, gpu_id, run_id, begin_us + 60000000, "
                       "end_us FROM allocation_span",
                       "overlaps another span of the same allocation and card");
}

// A second allocation row of job 7 (another account: the writer keys rows by owner too) on the
// same card at the same time: `gua job 7` adds both rows, so the overlap is counted twice.
TEST(JobSummaryCheck, TwoRowsOfOneJobOverlappingOnACardAreNamed) {
    expect_one_finding("INSERT INTO allocation (kind, alloc_id, user, account, host) VALUES "
                       "('slurm-job', '7', 'alice', 'chemistry', 'node-1'); "
                       "INSERT INTO allocation_span (allocation_id, gpu_id, run_id, begin_us, "
                       "end_us) SELECT (SELECT max(id) FROM allocation), gpu_id, run_id, "
                       "end_us - 60000000, end_us + 60000000 FROM allocation_span",
                       "overlaps span 1 of the same job (allocation 1) on the same card");
}

TEST(JobSummaryCheck, TheBinaryPrintsTheFindingAndExitsOne) {
    testing::TempDb t;
    record(t.db);
    t.db.exec("UPDATE allocation_summary SET idle_held_us = -1");
    const test::RunResult ok = test::run_gua({"db", "check", "--db", t.path});
    EXPECT_EQ(ok.exit_code, 1) << ok.out << ok.err;
    EXPECT_EQ(std::count(ok.out.begin(), ok.out.end(), '\n'), 1) << ok.out;
    EXPECT_NE(ok.out.find("job summary of allocation"), std::string::npos) << ok.out;
    EXPECT_NE(ok.out.find("negative figure"), std::string::npos) << ok.out;
}

} // namespace job_summary_check_test
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Per-job summaries: jobs recorded through the writer keep their `gua job` figures — and their
// rows of `gua report --group-by job` — after retention deletes their raw card-ticks (a job wholly
// gone, one whose ticks straddle the cutoff), against figures integrated here from the scenario;
// `gua report --job` over the job's share of its cards agrees with `gua job`.
#include "core/fatal.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/job_report.hpp"
#include "store/job_summary.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"
#include "two_card_recording.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace job_summary_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // an hour boundary
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_tick = 60 * k_s;
constexpr int k_ticks = 180;                     // three hours
constexpr std::int64_t k_energy_mj = 12'000'000; // 200 W over a 60 s tick
constexpr double k_hour_s = 3600.0;

/// Job 7 (alice, physics) holds both cards from 20 s into tick 0 to 30 s into tick 100; job 8
/// (bob) holds card 1 over ticks 110–149, across the hour the retention below keeps.
/// Card 0 is busy (SM 50 %, alice's 6000 MiB process) throughout; card 1 idle, never held.
telemetry::CardTickRecord card(int index, TimeUs t0, int k) {
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{
        index == 0 ? "GPU-a" : "GPU-b", index, "NVIDIA H100 80GB HBM3", 81559, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.readings.energy_mj = k_energy_mj;
    if (index == 0) {
        c.util_pct = 50;
        c.active_us = k_tick;
        c.bucket_us = {0, k_tick, 0, 0};
        telemetry::ProcessTick p;
        p.pid = 4000;
        p.start_ticks = 1;
        p.identity.user = "alice";
        p.identity.command = "train";
        p.mem_used_mib = 6000;
        p.sm_util_pct = 50;
        p.active_us = k_tick;
        c.processes.push_back(p);
    } else {
        c.util_pct = 0;
        c.active_us = 0;
        c.bucket_us = {k_tick, 0, 0, 0};
        c.idle_unlisted_us = k_tick;
    }
    TimeUs begin = 0;
    TimeUs end = 0;
    std::string job;
    if (k <= 100) {
        job = "7";
        begin = k == 0 ? t0 + 20 * k_s : t0;
        end = k == 100 ? t0 + 30 * k_s : t0 + k_tick;
    } else if (index == 1 && k >= 110 && k < 150) {
        job = "8";
        begin = t0;
        end = t0 + k_tick;
    }
    if (!job.empty()) {
        const DurationUs d = end - begin;
        c.allocation = index == 0 ? telemetry::AllocationTimes{d, d, 0, 0, 0, 0}
                                  : telemetry::AllocationTimes{d, 0, 0, d, 0, 0};
        c.allocations = {telemetry::AllocationOwner{"slurm-job", job, job == "7" ? "alice" : "bob",
                                                    "physics", begin, end}};
    }
    return c;
}

void record(Database& db) {
    testing::record_two_cards(db, k_start, k_tick, k_ticks, card);
}

// Integrated by hand: job 7 holds each card 40 s + 99 ticks + 30 s; job 8 card 1 for 40 ticks.
constexpr DurationUs k_job7_us = 40 * k_s + 99 * k_tick + 30 * k_s;
constexpr DurationUs k_job8_us = 40 * k_tick;

report::JobReport job(Database& db, const std::string& id) {
    Result<report::JobReport> r =
        report::build_job_report(db, id, audit::Pricing{}, audit::Thresholds{});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r.value() : report::JobReport{};
}

void expect_job7(const report::JobReport& j) {
    ASSERT_EQ(j.cards.size(), 2U);
    const audit::JobCard& c0 = j.cards[0].figures;
    const audit::JobCard& c1 = j.cards[1].figures;
    EXPECT_EQ(c0.allocated_us, k_job7_us);
    EXPECT_EQ(c0.active_us, k_job7_us);
    EXPECT_EQ(c0.unused_us, 0);
    EXPECT_EQ(c1.allocated_us, k_job7_us);
    EXPECT_EQ(c1.unused_us, k_job7_us);
    EXPECT_EQ(c1.active_us, 0);
    ASSERT_TRUE(c0.mean_sm_pct && c0.peak_mem_mib && c0.energy_j);
    EXPECT_NEAR(*c0.mean_sm_pct, 50.0, 1e-9);
    EXPECT_EQ(*c0.peak_mem_mib, 6000);
    // Energy: the job's part of each tick's 12 kJ, by its overlap.
    EXPECT_NEAR(*c0.energy_j, 12000.0 * static_cast<double>(k_job7_us) / k_tick, 1e-3);
    EXPECT_EQ(j.begin_us, k_start + 20 * k_s);
    EXPECT_EQ(j.end_us, k_start + 100 * k_tick + 30 * k_s);
    ASSERT_EQ(j.notes.size(), 3U); // unused card, blocked time, a MIG slice
    EXPECT_EQ(j.notes[0], "used 1 of 2 allocated GPUs: ask for 1 (--gres=gpu:1)");
}

report::ReportModel window_report(Database& db, std::optional<std::string> job, bool by_job) {
    report::BuildOptions o;
    o.from = k_start;
    o.to = k_start + k_ticks * k_tick;
    o.job = std::move(job);
    o.group_by_job = by_job;
    return report::build_report(db, o, TimeZone::load("UTC").value());
}

TEST(JobSummary, JobsKeepTheirFiguresAfterRetentionDeletesTheirTicks) {
    testing::TempDb t;
    record(t.db);
    const report::JobReport before7 = job(t.db, "7");
    expect_job7(before7);
    EXPECT_FALSE(before7.summary_through_us);
    const report::JobReport before8 = job(t.db, "8");
    ASSERT_EQ(before8.cards.size(), 1U);
    EXPECT_EQ(before8.cards[0].figures.unused_us, k_job8_us);

    // Keep one hour of raw card-ticks: hours 0 and 1 (rolled up) go.
    Retention r(t.db, RetentionPolicy{k_us_per_hour, std::nullopt});
    const TimeUs now = k_start + k_ticks * k_tick + k_us_per_minute;
    EXPECT_GT(r.run_to_completion(now).blocks_deleted, 0);
    const auto span = Reader(t.db).span();
    ASSERT_TRUE(span);
    EXPECT_GE(span->first, k_start + 2 * k_us_per_hour);

    const report::JobReport after7 = job(t.db, "7");
    expect_job7(after7);
    ASSERT_TRUE(after7.summary_through_us);
    EXPECT_LE(*after7.summary_through_us, span->first);
    EXPECT_EQ(after7.cost_cents, before7.cost_cents);
    EXPECT_EQ(after7.blocked_cost_cents, before7.blocked_cost_cents);
    EXPECT_NEAR(*after7.total.energy_j, *before7.total.energy_j, 1e-6);
    EXPECT_EQ(after7.notes, before7.notes);
    // Job 8: its first 10 ticks from the summary, the rest raw — the same sum.
    const report::JobReport after8 = job(t.db, "8");
    ASSERT_EQ(after8.cards.size(), 1U);
    EXPECT_EQ(after8.cards[0].figures.unused_us, k_job8_us);
    EXPECT_EQ(after8.cards[0].figures.allocated_us, k_job8_us);
    EXPECT_TRUE(after8.summary_through_us);
    // The summary is idempotent: another retention pass adds nothing twice.
    r.run_to_completion(now + k_us_per_hour);
    EXPECT_EQ(job(t.db, "8").cards[0].figures.unused_us, k_job8_us);
    EXPECT_EQ(job(t.db, "7").cards[0].figures.active_us, k_job7_us);
}

TEST(JobSummary, GroupByJobAnswersForOldJobsFromTheSummary) {
    testing::TempDb t;
    record(t.db);
    const report::ReportModel fresh = window_report(t.db, std::nullopt, true);
    ASSERT_TRUE(fresh.jobs);
    ASSERT_EQ(fresh.jobs->size(), 2U);
    const report::JobGroupRow& j7 = fresh.jobs->at(0);
    EXPECT_EQ(j7.id, "7");
    EXPECT_EQ(j7.owner, "alice");
    EXPECT_EQ(j7.gpus_allocated, 2U);
    EXPECT_NEAR(j7.allocated_hours * k_hour_s, 2.0 * k_job7_us / 1e6, 1e-6);
    EXPECT_NEAR(j7.active_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_NEAR(j7.allocated_unused_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_FALSE(j7.from_summary);
    EXPECT_EQ(fresh.jobs->at(1).id, "8");

    Retention r(t.db, RetentionPolicy{k_us_per_hour, std::nullopt});
    r.run_to_completion(k_start + k_ticks * k_tick + k_us_per_minute);
    const report::ReportModel old = window_report(t.db, std::nullopt, true);
    ASSERT_TRUE(old.jobs);
    ASSERT_EQ(old.jobs->size(), 2U);
    const report::JobGroupRow& o7 = old.jobs->at(0);
    EXPECT_EQ(o7.id, "7");
    EXPECT_TRUE(o7.from_summary);
    EXPECT_DOUBLE_EQ(o7.allocated_hours, j7.allocated_hours);
    EXPECT_DOUBLE_EQ(o7.active_hours, j7.active_hours);
    EXPECT_DOUBLE_EQ(o7.allocated_unused_hours, j7.allocated_unused_hours);
    EXPECT_EQ(o7.cost_cents, j7.cost_cents);
    EXPECT_NEAR(old.jobs->at(1).allocated_unused_hours * k_hour_s, k_job8_us / 1e6, 1e-6);
}

TEST(JobSummary, ReportOfOneJobAgreesWithGuaJob) {
    testing::TempDb t;
    record(t.db);
    const report::JobReport j = job(t.db, "7");
    const report::ReportModel m = window_report(t.db, std::string("7"), false);
    EXPECT_EQ(m.window_from, j.begin_us);
    EXPECT_EQ(m.window_to, j.end_us);
    EXPECT_EQ(m.filters, std::vector<std::string>{"job=7"});
    // §1: the job's time only, split as gua job splits it.
    EXPECT_NEAR(m.headline.active_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_NEAR(m.headline.allocated_unused_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_NEAR(m.headline.truly_idle_hours, 0.0, 1e-12);
    EXPECT_NEAR(m.headline.idle_held_hours, 0.0, 1e-12);
    // §3 per card; §4 alice's attributed hours are card 0's active time.
    ASSERT_EQ(m.gpus.size(), 2U);
    EXPECT_NEAR(m.gpus[0].shares.active_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_NEAR(m.gpus[1].shares.allocated_unused_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    ASSERT_FALSE(m.identities.empty());
    EXPECT_EQ(m.identities[0].name, "alice");
    EXPECT_NEAR(m.identities[0].active_hours * k_hour_s, k_job7_us / 1e6, 1e-3);
    // The allocation section: all of it allocated, to job 7.
    ASSERT_TRUE(m.allocation);
    EXPECT_NEAR(m.allocation->allocated_unused_hours * k_hour_s, k_job7_us / 1e6, 1e-6);
    EXPECT_EQ(m.allocation->unallocated_active_hours, 0.0);
    EXPECT_EQ(m.allocation->allocations, 1U);
    // An unknown job is a usage error; a pruned one points to gua job.
    EXPECT_THROW(window_report(t.db, std::string("99"), false), Fatal);
    Retention r(t.db, RetentionPolicy{k_us_per_hour, std::nullopt});
    r.run_to_completion(k_start + k_ticks * k_tick + k_us_per_minute);
    try {
        window_report(t.db, std::string("7"), false);
        ADD_FAILURE() << "a pruned job was reported";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("`gua job 7` reports it"), std::string::npos)
            << e.what();
    }
}

} // namespace job_summary_test
} // namespace gua::store

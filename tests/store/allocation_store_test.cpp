// SPDX-License-Identifier: Apache-2.0
// Allocations through the store: the per-card-tick crossing round-trips through tick blocks (whole
// ticks as one code, partial ones listed), owners become allocation rows and merged spans, the
// reader hands the audit its shares, the views and rollups show allocated-unused time, `gua db
// check` names bad spans, and a host without allocations stores nothing for them.
#include "audit/classify.hpp"
#include "audit/window.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "store/maintenance.hpp"
#include "store/reader.hpp"
#include "store/rollup.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::store {
namespace allocation_store_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // an hour boundary
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_tick = 60 * k_s;
constexpr int k_ticks = 10;

telemetry::AllocationOwner owner(const std::string& id, TimeUs begin, TimeUs end) {
    return telemetry::AllocationOwner{"slurm-job", id, "alice", "physics", begin, end};
}

/// Tick k: 20 s active, 40 s idle without holders. Allocations: job 100 ticks 0–3 and the first
/// half of tick 4; none in tick 5; unknown in tick 6; job 200 ticks 7–8; job 100 again tick 9.
telemetry::Tick tick_at(int k, bool with_allocations) {
    telemetry::Tick t;
    t.seq = static_cast<std::uint64_t>(k);
    t.t0 = k_start + k * k_tick;
    t.duration_us = k_tick;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "A100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 34;
    c.active_us = 20 * k_s;
    c.bucket_us = {40 * k_s, 20 * k_s, 0, 0};
    c.idle_unlisted_us = 40 * k_s;
    if (with_allocations) {
        const TimeUs t0 = t.t0;
        if (k <= 3 || k >= 7) {
            c.allocation = {k_tick, 20 * k_s, 0, 40 * k_s, 0, 0};
            c.allocations = {owner(k >= 7 && k <= 8 ? "200" : "100", t0, t0 + k_tick)};
        } else if (k == 4) {
            c.allocation = {30 * k_s, 10 * k_s, 0, 20 * k_s, 0, 0};
            c.allocations = {owner("100", t0, t0 + 30 * k_s)};
        } else if (k == 6) {
            c.allocation = {0, 0, 0, 0, k_tick, 40 * k_s};
        }
    }
    t.cards.push_back(c);
    return t;
}

void record(Database& db, bool with_allocations) {
    Writer w(db, RunInfo{"node-1", "d", "nvml", k_tick, 10.0, k_start});
    for (int k = 0; k < k_ticks; ++k) {
        w.write(tick_at(k, with_allocations));
    }
    w.finish(k_start + k_ticks * k_tick);
}

TEST(AllocationStore, CrossingAndOwnersRoundTrip) {
    testing::TempDb t;
    record(t.db, true);
    Reader reader(t.db);
    const TimeUs end = k_start + k_ticks * k_tick;
    const std::vector<audit::AllocationRow> rows = reader.allocations(k_start, end);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0], (audit::AllocationRow{"slurm-job", "100", "alice", "physics", "node-1",
                                             k_start, end}));
    EXPECT_EQ(rows[1], (audit::AllocationRow{"slurm-job", "200", "alice", "physics", "node-1",
                                             k_start + 7 * k_tick, k_start + 9 * k_tick}));
    // Job 100's ticks 0–4 are one span; its tick 9 another; job 200's one.
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM allocation_span"), 3);
    int k = 0;
    audit::StateTimes sum;
    reader.scan(k_start, end, [&](const audit::CardTick& c) {
        const telemetry::Tick expected = tick_at(k, true);
        EXPECT_EQ(c.allocation, expected.cards[0].allocation) << "tick " << k;
        std::vector<audit::AllocationShare> shares;
        for (const telemetry::AllocationOwner& o : expected.cards[0].allocations) {
            shares.push_back({o.id == "100" ? 0U : 1U, o.end - o.begin});
        }
        EXPECT_EQ(c.allocations, shares) << "tick " << k;
        sum += audit::classify(c, audit::Thresholds{});
        ++k;
    });
    EXPECT_EQ(k, k_ticks);
    // Integrated by hand: 40 s unused in ticks 0–3 and 7–9, 20 s in tick 4; truly idle 20 s in
    // tick 4 and 40 s in tick 5; tick 6's 40 s idle with the allocation unknown is unmeasured.
    EXPECT_EQ(sum.allocated_unused, 300 * k_s);
    EXPECT_EQ(sum.truly_idle, 60 * k_s);
    EXPECT_EQ(sum.unmeasured, 40 * k_s);
    EXPECT_EQ(sum.active, 200 * k_s);
    // A window over tick 9 only lists job 100, indexed 0 there.
    const std::vector<audit::AllocationRow> late = reader.allocations(k_start + 9 * k_tick, end);
    ASSERT_EQ(late.size(), 1U);
    EXPECT_EQ(late[0].id, "100");
    reader.scan(k_start + 9 * k_tick, end, [&](const audit::CardTick& c) {
        EXPECT_EQ(c.allocations, (std::vector<audit::AllocationShare>{{0U, k_tick}}));
    });
    // Whole ticks are one code each; only tick 4's six times are listed.
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM tick_block WHERE alloc_shape IS NOT NULL"),
              t.db.scalar("SELECT count(*) FROM tick_block"));
    EXPECT_EQ(check_database(t.db), std::vector<std::string>{});
}

TEST(AllocationStore, ViewsShowTheCrossing) {
    testing::TempDb t;
    record(t.db, true);
    EXPECT_EQ(t.db.scalar("SELECT sum(allocated_us) FROM card_tick"), 450 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT sum(allocated_unused_us) FROM card_tick"), 300 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT sum(alloc_active_us) FROM card_tick"), 150 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT sum(alloc_unknown_us) FROM card_tick"), 60 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT sum(alloc_unknown_idle_us) FROM card_tick"), 40 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT CAST(round(sum(allocated_unused_s)) AS INTEGER) FROM "
                          "card_tick_state"),
              300);
    EXPECT_EQ(t.db.scalar("SELECT CAST(round(sum(truly_idle_s)) AS INTEGER) FROM "
                          "card_tick_state"),
              60);
    EXPECT_EQ(t.db.scalar("SELECT CAST(round(sum(unmeasured_s)) AS INTEGER) FROM "
                          "card_tick_state"),
              40);
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM card_tick_state WHERE state = "
                          "'allocated-unused'"),
              7); // ticks 0–3 and 7–9 wholly; tick 4 by 20 s of 40 s idle, not more than half
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM card_tick_state WHERE state = 'unmeasured'"), 1);
}

TEST(AllocationStore, RollupsKeepAllocatedUnused) {
    testing::TempDb t;
    record(t.db, true);
    build_missing_rollups(t.db, k_start + 2 * k_us_per_hour, audit::Thresholds{});
    EXPECT_EQ(t.db.scalar("SELECT allocated_unused_us FROM rollup_hour"), 300 * k_s);
    EXPECT_EQ(t.db.scalar("SELECT allocated_unused_us FROM rollup_gpu"), 300 * k_s);
    EXPECT_EQ(check_database(t.db), std::vector<std::string>{});
    // Raw ticks gone (retention): the window still reports the allocated-unused time.
    t.db.exec("DELETE FROM tick_block");
    Reader reader(t.db);
    audit::WindowAccumulator acc(audit::Thresholds{}, 0, [](TimeUs) { return std::pair{0, 0}; });
    reader.accumulate(k_start, k_start + k_us_per_hour, std::nullopt, acc);
    EXPECT_EQ(acc.states().allocated_unused, 300 * k_s);
    EXPECT_EQ(acc.states().truly_idle, 60 * k_s);
    // Tick 6's idle time is flagged as allocation unknown, not as unknown process lists.
    EXPECT_EQ(acc.gpus().at(1).provenance.allocation_unknown_us, 40 * k_s);
    EXPECT_EQ(acc.gpus().at(1).provenance.holders_unknown_us, 0);
}

// A report whose hour comes from the hourly rollup still has the matrix and the owners (rollups
// keep the allocated-unused state, not who held it: they come from the raw card-ticks), worked
// out from tick_at()'s scenario.
TEST(AllocationStore, AReportFromRollupsKeepsTheMatrixAndOwners) {
    testing::TempDb t;
    record(t.db, true);
    build_missing_rollups(t.db, k_start + 2 * k_us_per_hour, audit::Thresholds{});
    report::BuildOptions o;
    o.from = k_start;
    o.to = k_start + k_us_per_hour;
    o.window_label = "1h";
    const report::ReportModel m = report::build_report(t.db, o, TimeZone::load("UTC").value());
    ASSERT_TRUE(m.allocation);
    const report::AllocationSection& a = *m.allocation;
    const double s = 1.0 / 3600;
    // Allocated: ticks 0–3 and 7–9 whole, half of tick 4: 20 s active and 40 s unused each.
    EXPECT_NEAR(a.allocated_active_hours, (7 * 20 + 10) * s, 1e-12);
    EXPECT_NEAR(a.allocated_unused_hours, (7 * 40 + 20) * s, 1e-12);
    // Not allocated: tick 5 and the other half of tick 4; unknown: tick 6.
    EXPECT_NEAR(a.unallocated_active_hours, (20 + 10) * s, 1e-12);
    EXPECT_NEAR(a.truly_idle_hours, (40 + 20) * s, 1e-12);
    EXPECT_NEAR(a.unknown_hours, 60 * s, 1e-12);
    EXPECT_EQ(a.allocations, 2u);
    ASSERT_EQ(a.owners.size(), 1u);
    EXPECT_EQ(a.owners[0].name, "alice");
    EXPECT_NEAR(a.owners[0].allocated_hours, (7 * 60 + 30) * s, 1e-12);
    EXPECT_NEAR(a.owners[0].allocated_unused_hours, (7 * 40 + 20) * s, 1e-12);
    // Raw ticks gone: the state stays, the matrix says where it stops.
    t.db.exec("DELETE FROM tick_block");
    const report::ReportModel pruned = report::build_report(t.db, o, TimeZone::load("UTC").value());
    EXPECT_NEAR(pruned.headline.allocated_unused_hours, (7 * 40 + 20) * s, 1e-12);
    EXPECT_TRUE(std::any_of(pruned.notes.begin(), pruned.notes.end(), [](const std::string& n) {
        return n.starts_with("the allocation matrix and owners need raw card-ticks");
    }));
}

TEST(AllocationStore, NoAllocationsStoreNothing) {
    testing::TempDb t;
    record(t.db, false);
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM tick_block WHERE alloc_shape IS NOT NULL OR "
                          "alloc_us IS NOT NULL"),
              0);
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM allocation"), 0);
    EXPECT_EQ(t.db.scalar("SELECT sum(allocated_us) FROM card_tick"), 0);
    Reader reader(t.db);
    reader.scan(k_start, k_start + k_ticks * k_tick, [&](const audit::CardTick& c) {
        EXPECT_FALSE(c.allocation.any());
        EXPECT_TRUE(c.allocations.empty());
    });
}

TEST(AllocationStore, DbCheckNamesABadSpan) {
    testing::TempDb t;
    record(t.db, true);
    t.db.exec("UPDATE allocation_span SET end_us = begin_us WHERE id = 1");
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_NE(problems[0].find("allocation span 1 (slurm-job 100)"), std::string::npos)
        << problems[0];
}

} // namespace allocation_store_test
} // namespace gua::store

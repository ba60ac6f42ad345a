// SPDX-License-Identifier: Apache-2.0
// Retention: only data beyond its period goes, in batches, and reports over the rolled-up past
// stay exactly as they were.
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace retention_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

/// Four GPUs for `days` days at 30 s; one process on GPU 0 half of the time.
void record_days(Database& db, int days) {
    Writer w(db, RunInfo{"h", "1", "test", 30 * k_us_per_second, 10, k_start});
    for (std::int64_t n = 0; n < days * 2880; ++n) {
        telemetry::Tick tick;
        tick.t0 = k_start + n * 30 * k_us_per_second;
        tick.duration_us = 30 * k_us_per_second;
        for (int g = 0; g < 4; ++g) {
            telemetry::CardTickRecord c;
            c.device.uuid = "GPU-" + std::to_string(g);
            c.device.index = g;
            c.util_source = telemetry::UtilSource::snapshot;
            const bool busy = (n / 100 + g) % 3 == 0;
            c.util_pct = busy ? 80 : 0;
            c.active_us = busy ? tick.duration_us : 0;
            c.bucket_us[busy ? 2 : 0] = tick.duration_us;
            if (g == 0 && (n / 500) % 2 == 0) {
                telemetry::ProcessTick p;
                p.pid = 42;
                p.identity.user = "alice";
                p.mem_used_mib = 4000;
                c.processes.push_back(p);
            }
            tick.cards.push_back(c);
        }
        w.write(tick);
    }
    w.finish(k_start + days * k_us_per_day);
}

report::ReportModel report_of(Database& db, TimeUs from, TimeUs to) {
    report::BuildOptions o;
    o.from = from;
    o.to = to;
    return report::build_report(db, o, TimeZone::load("UTC").value());
}

TEST(Retention, DeletesOnlyRolledUpRawBeyondThePeriodInBatches) {
    testing::TempDb t;
    record_days(t.db, 6);
    const TimeUs now = k_start + 6 * k_us_per_day;
    const report::ReportModel before = report_of(t.db, k_start, k_start + 5 * k_us_per_day);
    const std::uint64_t ticks_before = Reader(t.db).card_tick_count();

    Retention r(t.db, RetentionPolicy{2 * k_us_per_day, std::nullopt});
    const RetentionStep first = r.step(now);
    EXPECT_LE(first.blocks_deleted, Retention::k_batch_blocks);
    const RetentionStep rest = r.run_to_completion(now);
    EXPECT_FALSE(rest.more);
    EXPECT_GT(first.blocks_deleted + rest.blocks_deleted, 0);
    EXPECT_EQ(t.db.scalar("PRAGMA freelist_count"), 0);

    const auto span = Reader(t.db).span().value();
    EXPECT_EQ(span.first, now - 2 * k_us_per_day);
    EXPECT_LT(Reader(t.db).card_tick_count(), ticks_before);
    // The rolled-up past reports exactly as before.
    const report::ReportModel after = report_of(t.db, k_start, k_start + 5 * k_us_per_day);
    EXPECT_EQ(after.samples, before.samples);
    EXPECT_EQ(after.headline.idle_held_hours, before.headline.idle_held_hours);
    EXPECT_EQ(after.headline.active, before.headline.active);
    ASSERT_EQ(after.identities.size(), before.identities.size());
    EXPECT_EQ(after.identities[0].idle_held_gib_hours, before.identities[0].idle_held_gib_hours);
    EXPECT_EQ(after.notes, before.notes) << "rolled-up hours report without approximation";
    // Idle: nothing more to do, and a second step within a minute does nothing.
    EXPECT_EQ(r.step(now + 1).blocks_deleted, 0);
}

TEST(Retention, KeepsRawOfHoursWithoutRollup) {
    testing::TempDb t;
    record_days(t.db, 2);
    t.db.exec("DELETE FROM rollup_hour; DELETE FROM rollup_gpu; DELETE FROM rollup_identity;");
    const std::uint64_t ticks = Reader(t.db).card_tick_count();
    Retention r(t.db, RetentionPolicy{k_us_per_hour, std::nullopt});
    r.run_to_completion(k_start + 30 * k_us_per_day);
    EXPECT_EQ(Reader(t.db).card_tick_count(), ticks);
}

TEST(Retention, RollupsExpireWhenConfiguredAndRawFollowsThem) {
    testing::TempDb t;
    record_days(t.db, 3);
    Retention r(t.db, RetentionPolicy{k_us_per_day, k_us_per_day});
    r.run_to_completion(k_start + 3 * k_us_per_day);
    const auto rolled = Reader(t.db).rollup_span().value();
    EXPECT_EQ(rolled.first, k_start + 2 * k_us_per_day);
    EXPECT_EQ(Reader(t.db).span().value().first, k_start + 2 * k_us_per_day);
}

TEST(Retention, ForeverKeepsEverythingAndTruncatesTheWal) {
    testing::TempDb t;
    record_days(t.db, 1);
    const std::uint64_t ticks = Reader(t.db).card_tick_count();
    Retention r(t.db, RetentionPolicy{std::nullopt, std::nullopt});
    const RetentionStep s = r.step(k_start + 400 * k_us_per_day);
    EXPECT_TRUE(s.checkpointed);
    EXPECT_EQ(wal_bytes(t.db), 0);
    EXPECT_EQ(Reader(t.db).card_tick_count(), ticks);
}

} // namespace retention_test
} // namespace gua::store

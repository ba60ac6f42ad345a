// SPDX-License-Identifier: Apache-2.0
// The per-card timeline: bucket widths for common windows, ticks split across a bucket boundary,
// rollups kept whole, and end to end the spans of each card adding up to its §3 hours.
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/timeline.hpp"
#include "store/reader.hpp"
#include "store/rollup.hpp"
#include "store/temp_db.hpp"
#include "store/writer.hpp"

#include <gtest/gtest.h>

namespace gua::report {
namespace {

constexpr TimeUs k_day0 = 1'777'852'800 * k_us_per_second; // 2026-05-04T00:00:00Z, a Monday

TEST(TimelineGrid, PicksTheSmallestRoundWidthWithinTheBucketLimit) {
    const auto width = [](DurationUs window) {
        return TimelineGrid(k_day0 + 17 * k_us_per_second, k_day0 + 17 * k_us_per_second + window)
            .bucket_us();
    };
    // 1 h: 60 one-minute buckets (+1 for alignment). 1 d: 288 (+1) five-minute buckets.
    EXPECT_EQ(width(k_us_per_hour), k_us_per_minute);
    EXPECT_EQ(width(k_us_per_day), 5 * k_us_per_minute);
    // 7 d: 15 min would need 673 buckets; 30 min needs 337.
    EXPECT_EQ(width(7 * k_us_per_day), 30 * k_us_per_minute);
    // 30 d: 1 h would need 721; 2 h needs 361. 365 d: 12 h would need 731; 1 d needs 366.
    EXPECT_EQ(width(30 * k_us_per_day), 2 * k_us_per_hour);
    EXPECT_EQ(width(365 * k_us_per_day), k_us_per_day);
    // Ten years: whole weeks beyond the list (3650 d / 480 = 7.6 d → 2 weeks).
    EXPECT_EQ(width(3650 * k_us_per_day), 14 * k_us_per_day);
}

TEST(TimelineGrid, SplitsATickAcrossABoundaryAndKeepsARollupHourWhole) {
    TimelineGrid grid(k_day0, k_day0 + k_us_per_day); // 5-minute buckets
    const DurationUs second = k_us_per_second;
    // A 30 s tick from 4:50 to 5:20 past midnight: 10 s in the first bucket, 20 s in the second.
    grid.add(3, k_day0 + 290 * second, k_day0 + 320 * second,
             audit::StateTimes{30 * second, 0, 0, 0});
    // An hourly rollup of card 3, 01:00–02:00: 40 min idle-held, 20 min truly idle.
    grid.add(3, k_day0 + k_us_per_hour, k_day0 + 2 * k_us_per_hour,
             audit::StateTimes{0, 40 * k_us_per_minute, 20 * k_us_per_minute, 0});
    // A tick of the same card inside that hour joins the hour's span.
    grid.add(3, k_day0 + k_us_per_hour + 10 * k_us_per_minute,
             k_day0 + k_us_per_hour + 10 * k_us_per_minute + 30 * second,
             audit::StateTimes{0, 0, 0, 30 * second});
    const std::vector<TimelineSpan> spans = grid.spans(3);
    ASSERT_EQ(spans.size(), 3u);
    EXPECT_EQ(spans[0].from, k_day0);
    EXPECT_EQ(spans[0].to, k_day0 + 5 * k_us_per_minute);
    EXPECT_DOUBLE_EQ(spans[0].active_hours, 10.0 / 3600.0);
    EXPECT_EQ(spans[1].from, k_day0 + 5 * k_us_per_minute);
    EXPECT_DOUBLE_EQ(spans[1].active_hours, 20.0 / 3600.0);
    EXPECT_EQ(spans[2].from, k_day0 + k_us_per_hour);
    EXPECT_EQ(spans[2].to, k_day0 + 2 * k_us_per_hour);
    EXPECT_DOUBLE_EQ(spans[2].idle_held_hours, 40.0 / 60.0);
    EXPECT_DOUBLE_EQ(spans[2].truly_idle_hours, 20.0 / 60.0);
    EXPECT_DOUBLE_EQ(spans[2].unmeasured_hours, 30.0 / 3600.0);
    EXPECT_TRUE(grid.spans(0).empty());
    EXPECT_TRUE(grid.spans(7).empty());
}

TEST(TimelineGrid, ClampsSpansBeyondTheWindowToItsEnds) {
    TimelineGrid grid(k_day0, k_day0 + k_us_per_hour); // one-minute buckets
    grid.add(0, k_day0 - k_us_per_minute, k_day0 - 30 * k_us_per_second,
             audit::StateTimes{0, 0, 30 * k_us_per_second, 0});
    grid.add(0, k_day0 + k_us_per_hour - 10 * k_us_per_second,
             k_day0 + k_us_per_hour + 20 * k_us_per_second,
             audit::StateTimes{30 * k_us_per_second, 0, 0, 0});
    const std::vector<TimelineSpan> spans = grid.spans(0);
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[0].from, k_day0);
    EXPECT_DOUBLE_EQ(spans[0].truly_idle_hours, 30.0 / 3600.0);
    EXPECT_EQ(spans[1].to, k_day0 + k_us_per_hour);
    EXPECT_DOUBLE_EQ(spans[1].active_hours, 30.0 / 3600.0);
}

telemetry::CardTickRecord timeline_card(int index, bool active) {
    telemetry::CardTickRecord c;
    c.device.uuid = "GPU-0000000" + std::to_string(index) + "-aaaa-bbbb-cccc-0123456789ab";
    c.device.index = index;
    c.device.name = "NVIDIA A100-SXM4-80GB";
    c.device.memory_total_mib = 81920;
    c.util_source = telemetry::UtilSource::samples;
    c.active_us = active ? 30 * k_us_per_second : 0;
    c.util_pct = active ? 100.0 : 0.0;
    c.bucket_us[active ? 3 : 0] = 30 * k_us_per_second;
    c.util_samples = 1;
    return c;
}

TEST(TimelineBuild, RollupHoursAndRawTicksAddUpToEachCardsHours) {
    // Two cards, 30 s ticks from 00:00 to 02:30: card 0 busy from 01:00 to 02:00, card 1 idle
    // throughout. Hours 00 and 01 are rolled up; 02:00–02:30 stays raw.
    testing::TempDb t;
    const DurationUs tick = 30 * k_us_per_second;
    const TimeUs end = k_day0 + 2 * k_us_per_hour + 30 * k_us_per_minute;
    {
        store::Writer w(t.db, store::RunInfo{"host", "560.35.05", "nvml", tick, 10.0, k_day0});
        std::uint64_t seq = 0;
        for (TimeUs t0 = k_day0; t0 < end; t0 += tick) {
            telemetry::Tick tk;
            tk.t0 = t0;
            tk.duration_us = tick;
            tk.seq = seq++;
            const bool busy = t0 >= k_day0 + k_us_per_hour && t0 < k_day0 + 2 * k_us_per_hour;
            tk.cards = {timeline_card(0, busy), timeline_card(1, false)};
            w.write(tk);
        }
        w.finish(end);
    }
    // The writer rolls up each finished hour; this builds any it left (none expected).
    EXPECT_EQ(store::build_missing_rollups(t.db, end, audit::Thresholds{}), 0u);
    BuildOptions o;
    o.from = k_day0;
    o.to = k_day0 + k_us_per_day;
    o.window_label = "1d";
    const ReportModel m = build_report(t.db, o, TimeZone::load("UTC").value());
    EXPECT_EQ(m.timeline.bucket_us, 5 * k_us_per_minute);
    ASSERT_EQ(m.timeline.gpus.size(), 2u);
    ASSERT_EQ(m.gpus.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        const GpuTimeline& g = m.timeline.gpus[i];
        EXPECT_EQ(g.index, m.gpus[i].index);
        // Two rolled-up hours as two hour-long spans, then six 5-minute buckets of raw ticks.
        ASSERT_EQ(g.spans.size(), 8u) << i;
        EXPECT_EQ(g.spans[0].to - g.spans[0].from, k_us_per_hour);
        EXPECT_EQ(g.spans[1].from, k_day0 + k_us_per_hour);
        EXPECT_EQ(g.spans[2].from, k_day0 + 2 * k_us_per_hour);
        EXPECT_EQ(g.spans[7].to, end);
        double active = 0;
        double idle = 0;
        for (const TimelineSpan& s : g.spans) {
            active += s.active_hours;
            idle += s.truly_idle_hours + s.idle_held_hours + s.unmeasured_hours;
        }
        EXPECT_NEAR(active, m.gpus[i].shares.active_hours, 1e-9);
        EXPECT_NEAR(idle,
                    m.gpus[i].shares.truly_idle_hours + m.gpus[i].shares.idle_held_hours +
                        m.gpus[i].shares.unmeasured_hours,
                    1e-9);
    }
    // Card 0 was busy exactly in the second hour: 1 active hour there and nowhere else.
    EXPECT_DOUBLE_EQ(m.timeline.gpus[0].spans[1].active_hours, 1.0);
    EXPECT_DOUBLE_EQ(m.timeline.gpus[0].spans[0].active_hours, 0.0);
    EXPECT_DOUBLE_EQ(m.timeline.gpus[0].spans[0].truly_idle_hours, 1.0);
    EXPECT_DOUBLE_EQ(m.timeline.gpus[1].spans[1].active_hours, 0.0);
}

TEST(TimelineBuild, DaysFromDailyRollupsAreDrawnHourByHour) {
    // One card, 60 s ticks over two UTC days and an hour: busy 09:00–17:00 each day. The report
    // adds the first whole day from its daily rollup; its timeline still shows the hours.
    testing::TempDb t;
    const DurationUs tick = k_us_per_minute;
    const TimeUs end = k_day0 + 2 * k_us_per_day + k_us_per_hour;
    {
        store::Writer w(t.db, store::RunInfo{"host", "560.35.05", "nvml", tick, 10.0, k_day0});
        std::uint64_t seq = 0;
        for (TimeUs t0 = k_day0; t0 < end; t0 += tick) {
            telemetry::Tick tk;
            tk.t0 = t0;
            tk.duration_us = tick;
            tk.seq = seq++;
            const DurationUs of_day = (t0 - k_day0) % k_us_per_day;
            const bool busy = of_day >= 9 * k_us_per_hour && of_day < 17 * k_us_per_hour;
            telemetry::CardTickRecord c = timeline_card(0, busy);
            c.active_us = busy ? tick : 0;
            c.bucket_us = {};
            c.bucket_us[busy ? 3 : 0] = tick;
            tk.cards = {c};
            w.write(tk);
        }
        w.finish(end);
    }
    BuildOptions o;
    o.from = k_day0;
    o.to = k_day0 + 3 * k_us_per_day;
    o.window_label = "3d";
    // The two whole days come from their daily rollups.
    // The writer rolls up hours as they end; days are summed here (as the daemon's maintenance
    // does), the last hour stays raw.
    store::build_missing_rollups(t.db, k_day0 + 2 * k_us_per_day, audit::Thresholds{});
    const TimeZone utc = TimeZone::load("UTC").value();
    audit::WindowAccumulator acc(audit::Thresholds{}, 0,
                                 [&utc](TimeUs at) { return utc.weekday_hour(at); });
    EXPECT_EQ(store::Reader(t.db).accumulate(o.from, o.to, std::nullopt, acc).rollup_days, 2u);
    const ReportModel m = build_report(t.db, o, TimeZone::load("UTC").value());
    EXPECT_EQ(m.timeline.bucket_us, 10 * k_us_per_minute); // 3 d: 432 buckets
    ASSERT_EQ(m.timeline.gpus.size(), 1u);
    const std::vector<TimelineSpan>& spans = m.timeline.gpus[0].spans;
    // 48 rolled-up hours, each its own span (none of them a whole day), then the last hour's
    // raw ticks in six 10-minute buckets.
    ASSERT_EQ(spans.size(), 54u);
    double active = 0;
    for (std::size_t h = 0; h < 48; ++h) {
        EXPECT_EQ(spans[h].from, k_day0 + static_cast<TimeUs>(h) * k_us_per_hour);
        EXPECT_EQ(spans[h].to - spans[h].from, k_us_per_hour);
        const std::size_t of_day = h % 24;
        EXPECT_DOUBLE_EQ(spans[h].active_hours, of_day >= 9 && of_day < 17 ? 1.0 : 0.0) << h;
        active += spans[h].active_hours;
    }
    EXPECT_EQ(spans[48].from, k_day0 + 48 * k_us_per_hour);
    EXPECT_EQ(spans[53].to, end);
    EXPECT_DOUBLE_EQ(spans[53].truly_idle_hours, 10.0 / 60.0);
    EXPECT_DOUBLE_EQ(active, 16.0);
    EXPECT_DOUBLE_EQ(m.gpus[0].shares.active_hours, 16.0);
}

} // namespace
} // namespace gua::report

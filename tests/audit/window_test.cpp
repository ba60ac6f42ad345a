// SPDX-License-Identifier: Apache-2.0
// WindowAccumulator: totals per GPU, identity and heatmap cell, efficiency buckets, coverage and
// gap detection over a stream of card-ticks.
#include "audit/window.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gua::audit {
namespace window_test { // named after the file: unique in a unity batch

constexpr TimeUs k_monday = 1767571200LL * k_us_per_second; // 2026-01-05T00:00:00Z
constexpr DurationUs k_dur = 30 * k_us_per_second;
constexpr std::uint32_t k_nobody = 0;

/// A fake zone: every day is Wednesday (3); the hour is the UTC hour plus 2.
std::pair<int, int> fake_weekday_hour(TimeUs t) {
    return {3, static_cast<int>((t / k_us_per_hour + 2) % 24)};
}

CardTick tick(std::uint32_t gpu, TimeUs t0, std::optional<DurationUs> active,
              std::vector<ProcTick> procs, std::array<DurationUs, k_bucket_count> buckets = {}) {
    CardTick t;
    t.gpu = gpu;
    t.t0 = t0;
    t.duration_us = k_dur;
    t.active_us = active;
    t.bucket_us = buckets;
    t.processes = std::move(procs);
    return t;
}

ProcTick proc(std::uint32_t identity, std::int64_t mib) {
    return ProcTick{identity,    telemetry::ProcessType::compute, mib, std::nullopt, std::nullopt,
                    std::nullopt};
}

TEST(Window, TotalsPerGpuIdentityAndCell) {
    int calls = 0;
    WindowAccumulator acc(Thresholds{}, k_nobody, [&calls](TimeUs t) {
        ++calls;
        return fake_weekday_hour(t);
    });
    const TimeUs t0 = k_monday + 10 * k_us_per_hour;
    // GPU 1: active (identity 5); GPU 2: idle-held (identity 6); GPU 1 again: truly idle.
    acc.add(tick(1, t0, k_dur, {proc(5, 4000)}, {0, 0, k_dur, 0}));
    acc.add(tick(2, t0, 0, {proc(6, 8000)}, {k_dur, 0, 0, 0}));
    acc.add(tick(1, t0 + k_dur, 0, {}, {k_dur, 0, 0, 0}));
    // GPU 2 without a utilization reading.
    acc.add(tick(2, t0 + k_dur, std::nullopt, {}));

    EXPECT_EQ(acc.ticks(), 4U);
    EXPECT_EQ(acc.states().active, k_dur);
    EXPECT_EQ(acc.states().idle_held, k_dur);
    EXPECT_EQ(acc.states().truly_idle, k_dur);
    EXPECT_EQ(acc.states().unmeasured, k_dur);

    ASSERT_EQ(acc.gpus().size(), 3U);
    EXPECT_EQ(acc.gpus()[0].ticks, 0U);
    EXPECT_EQ(acc.gpus()[1].ticks, 2U);
    EXPECT_EQ(acc.gpus()[1].states.active, k_dur);
    EXPECT_EQ(acc.gpus()[1].states.truly_idle, k_dur);
    EXPECT_EQ(acc.gpus()[1].states.idle_held, 0);
    EXPECT_EQ(acc.gpus()[2].states.idle_held, k_dur);
    EXPECT_EQ(acc.gpus()[2].states.unmeasured, k_dur);
    EXPECT_EQ(acc.gpus()[1].bucket_us[0], k_dur);
    EXPECT_EQ(acc.gpus()[1].bucket_us[2], k_dur);

    ASSERT_EQ(acc.identities().size(), 7U);
    EXPECT_EQ(acc.identities()[5].active_us, k_dur);
    EXPECT_EQ(acc.identities()[5].idle_held_us, 0);
    EXPECT_EQ(acc.identities()[5].ticks, 1U);
    EXPECT_EQ(acc.identities()[6].idle_held_us, k_dur);
    EXPECT_EQ(acc.identities()[6].idle_held_mib_ms, 8000 * k_dur / 1000);
    EXPECT_EQ(acc.identities()[6].ticks, 1U); // see IdentityTicksCountUnmeasuredCardTicks
    EXPECT_EQ(acc.identities()[k_nobody].ticks, 0U);

    // All four ticks are within 10:00–10:01 UTC → the fake zone's Wednesday 12:00 cell.
    const StateTimes& cell = acc.heatmap()[3][12];
    EXPECT_EQ(cell.active, k_dur);
    EXPECT_EQ(cell.idle_held, k_dur);
    EXPECT_EQ(cell.truly_idle, k_dur);
    EXPECT_EQ(cell.unmeasured, k_dur);
    EXPECT_EQ(acc.heatmap()[1][10].total(), 0);
    EXPECT_EQ(calls, 1); // one lookup per UTC quarter hour

    EXPECT_EQ(acc.first(), t0);
    EXPECT_EQ(acc.last_end(), t0 + 2 * k_dur);
    EXPECT_TRUE(acc.gaps().empty());
}

TEST(Window, HeatmapFollowsTheZoneFunctionAcrossHours) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    acc.add(tick(0, k_monday + 23 * k_us_per_hour + 59 * k_us_per_minute, k_dur, {proc(1, 500)}));
    acc.add(tick(0, k_monday + 24 * k_us_per_hour, 0, {proc(1, 500)}));
    EXPECT_EQ(acc.heatmap()[3][1].active, k_dur); // 23:59 UTC + 2 h → 01
    EXPECT_EQ(acc.heatmap()[3][2].idle_held, k_dur);
    EXPECT_EQ(acc.heatmap()[3][2].active, 0);
}

TEST(Window, IdentityTicksCountUnmeasuredCardTicks) {
    // IdentityTotals::ticks is documented as "card-ticks in which the identity had a process"
    // (and feeds §4's samples column). A process on a card without a utilization reading (a MIG
    // instance) is still on that card-tick.
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    acc.add(tick(0, k_monday, 0, {proc(6, 8000)}));
    acc.add(tick(0, k_monday + k_dur, std::nullopt, {proc(6, 8000)}));
    acc.add(tick(1, k_monday, std::nullopt, {proc(7, 4000)}));
    ASSERT_GE(acc.identities().size(), 7U);
    EXPECT_EQ(acc.identities()[6].ticks, 2U);
    ASSERT_EQ(acc.identities().size(), 8U) << "identity 7 (only on a MIG card) was dropped";
    EXPECT_EQ(acc.identities()[7].ticks, 1U);
    EXPECT_EQ(acc.identities()[7].active_us + acc.identities()[7].idle_held_us, 0);
}

TEST(Window, ActiveWithoutProcessIsCountedForNobody) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    acc.add(tick(0, k_monday, k_dur / 2, {}));
    ASSERT_FALSE(acc.identities().empty());
    EXPECT_EQ(acc.identities()[k_nobody].active_us, k_dur / 2);
    EXPECT_EQ(acc.identities()[k_nobody].ticks, 1U);
}

TEST(Window, TenMinuteHoleIsOneGap) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    TimeUs t = k_monday;
    for (int i = 0; i < 4; ++i, t += k_dur) {
        acc.add(tick(0, t, 0, {}));
    }
    const TimeUs hole_from = t;
    t += 10 * k_us_per_minute;
    for (int i = 0; i < 4; ++i, t += k_dur) {
        acc.add(tick(0, t, 0, {}));
    }
    ASSERT_EQ(acc.gaps().size(), 1U);
    EXPECT_EQ(acc.gaps()[0].from, hole_from);
    EXPECT_EQ(acc.gaps()[0].to, hole_from + 10 * k_us_per_minute);
    EXPECT_EQ(acc.first(), k_monday);
    EXPECT_EQ(acc.last_end(), t);
}

TEST(Window, RecordedTimeIsTheWindowWithDataLessItsGaps) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    EXPECT_EQ(acc.recorded_us(k_monday, k_monday + k_us_per_hour), 0) << "nothing added";
    // Four 30 s ticks from 00:02, a 10-minute hole, four more: data 00:02–00:04 and 00:14–00:16.
    TimeUs t = k_monday + 2 * k_us_per_minute;
    for (int i = 0; i < 4; ++i, t += k_dur) {
        acc.add(tick(0, t, 0, {}));
    }
    t += 10 * k_us_per_minute;
    for (int i = 0; i < 4; ++i, t += k_dur) {
        acc.add(tick(0, t, 0, {}));
    }
    // The hour from 00:00: 2 + 2 minutes with data.
    EXPECT_EQ(acc.recorded_us(k_monday, k_monday + k_us_per_hour), 4 * k_us_per_minute);
    // Clipped to a window that starts inside the first run (00:03) and ends inside the second
    // (00:15): 1 + 1 minutes.
    EXPECT_EQ(acc.recorded_us(k_monday + 3 * k_us_per_minute, k_monday + 15 * k_us_per_minute),
              2 * k_us_per_minute);
    // A window that starts inside the hole (00:05) counts only the hole's part inside it:
    // 00:14–00:15 is the one minute with data.
    EXPECT_EQ(acc.recorded_us(k_monday + 5 * k_us_per_minute, k_monday + 15 * k_us_per_minute),
              k_us_per_minute);
    EXPECT_EQ(acc.recorded_us(k_monday + k_us_per_hour, k_monday), 0) << "empty window";
}

TEST(Window, NormalSpacingAndShortHiccupsAreNoGap) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    TimeUs t = k_monday;
    for (int i = 0; i < 20; ++i, t += k_dur) {
        acc.add(tick(0, t, 0, {}));
        acc.add(tick(1, t, 0, {})); // a second card at the same t0
    }
    // 50 s missing between 30 s ticks: under the 1-minute floor.
    t += 50 * k_us_per_second;
    acc.add(tick(0, t, 0, {}));
    EXPECT_TRUE(acc.gaps().empty());
    EXPECT_EQ(acc.ticks(), 41U);
}

TEST(Window, EfficiencyBucketTotals) {
    WindowAccumulator acc(Thresholds{}, k_nobody, fake_weekday_hour);
    acc.add(tick(0, k_monday, k_dur, {}, {1, 2, 3, 4}));
    acc.add(tick(1, k_monday, k_dur, {}, {10, 20, 30, 40}));
    acc.add(tick(0, k_monday + k_dur, k_dur, {}, {100, 0, 0, 0}));
    const std::array<DurationUs, k_bucket_count> expected{111, 22, 33, 44};
    EXPECT_EQ(acc.bucket_us(), expected);
    const std::array<DurationUs, k_bucket_count> gpu0{101, 2, 3, 4};
    EXPECT_EQ(acc.gpus()[0].bucket_us, gpu0);
}

TEST(Window, ThresholdsReachTheClassification) {
    Thresholds th;
    th.held_mib = 10000;
    WindowAccumulator acc(th, k_nobody, fake_weekday_hour);
    acc.add(tick(0, k_monday, 0, {proc(1, 8000)}));
    EXPECT_EQ(acc.states().truly_idle, k_dur);
    EXPECT_EQ(acc.thresholds().held_mib, 10000);
}

} // namespace window_test
} // namespace gua::audit

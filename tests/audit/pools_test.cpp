// SPDX-License-Identifier: Apache-2.0
// Bimodality from the stored buckets, and the waste pools: disjoint slices of each card-tick.
#include "audit/pattern.hpp"
#include "audit/pools.hpp"
#include "audit/window.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace gua::audit {
namespace pools_test { // named after the file: unique in a unity batch

constexpr DurationUs k_tick = 10 * k_us_per_second;

CardTick tick_with(std::array<DurationUs, 4> buckets, DurationUs active, double util,
                   std::int64_t held = 0) {
    CardTick t;
    t.duration_us = k_tick;
    t.bucket_us = buckets;
    t.active_us = active;
    t.util_pct = util;
    if (held > 0) {
        t.processes.push_back(ProcTick{1, telemetry::ProcessType::compute, held, std::nullopt,
                                       std::nullopt, std::nullopt});
    }
    return t;
}

constexpr DurationUs s(int seconds) {
    return seconds * k_us_per_second;
}

TEST(Pattern, FromStoredBucketsAlone) {
    CardTick unmeasured;
    unmeasured.duration_us = k_tick;
    EXPECT_EQ(pattern_of(unmeasured), Pattern::unmeasured);
    EXPECT_EQ(pattern_of(tick_with({s(10), 0, 0, 0}, 0, 2)), Pattern::inactive);
    EXPECT_EQ(pattern_of(tick_with({s(5), 0, 0, s(5)}, s(5), 50)), Pattern::bursty);
    EXPECT_EQ(pattern_of(tick_with({0, s(10), 0, 0}, s(10), 45)), Pattern::steady);
    EXPECT_EQ(pattern_of(tick_with({0, 0, 0, s(10)}, s(10), 97)), Pattern::steady);
    // Extremes 80 % with both sides at least 15 %: bursty; 79 % or a side at 14 %: steady.
    EXPECT_EQ(pattern_of(tick_with({s(2) - s(1) / 2, s(2), 0, s(6) + s(1) / 2}, s(8), 70)),
              Pattern::bursty);
    EXPECT_EQ(pattern_of(tick_with({s(4), s(2) + s(1) / 10, 0, s(4) - s(1) / 10}, s(6), 50)),
              Pattern::steady);
    EXPECT_EQ(pattern_of(tick_with({s(1) + s(1) * 4 / 10, 0, 0, s(8) + s(1) * 6 / 10}, s(9), 86)),
              Pattern::steady);
    EXPECT_STREQ(to_string(Pattern::bursty), "bursty");
}

TEST(Pools, OfficeHoursAreWeekdaysNineToSix) {
    EXPECT_FALSE(is_off_hours(1, 9));
    EXPECT_TRUE(is_off_hours(1, 8));
    EXPECT_FALSE(is_off_hours(5, 17));
    EXPECT_TRUE(is_off_hours(5, 18));
    EXPECT_TRUE(is_off_hours(6, 12));
    EXPECT_TRUE(is_off_hours(0, 12));
}

// A card at 99 % utilization that barely works (one spinning thread on an H200 drew 124 W of
// 700 W with 0.76 % of its SMs active, docs/real-driver.md) is never compute-bound: faster math
// cannot shorten it. GPM's SM active decides where it was measured, else power / limit.
TEST(Pools, LightTicksAreNeverComputeBound) {
    const Thresholds th;
    const auto compute_bound = [&](std::optional<std::int64_t> power_mw,
                                   std::optional<std::int64_t> sm_active_cpct) {
        CardTick t = tick_with({0, 0, 0, s(10)}, s(10), 99, 20000);
        t.readings.power_mw = power_mw;
        t.readings.power_limit_mw = 700'000;
        t.readings.sm_active_cpct = sm_active_cpct;
        PoolTimes p{};
        CardProfile prof;
        add_to_pools(t, classify(t, th), pattern_of(t), 20000, false, p, prof);
        EXPECT_EQ(prof.steady_compute_bound_us > 0,
                  p[static_cast<std::size_t>(Pool::compute_bound)] > 0);
        return p[static_cast<std::size_t>(Pool::compute_bound)];
    };
    EXPECT_NEAR(compute_bound(std::nullopt, std::nullopt), 9.9e6, 1e-3) << "no reading: as before";
    EXPECT_NEAR(compute_bound(691'000, std::nullopt), 9.9e6, 1e-3) << "at the power limit";
    EXPECT_EQ(compute_bound(124'000, std::nullopt), 0.0) << "18 % of the limit";
    EXPECT_EQ(compute_bound(691'000, 76), 0.0) << "SM active 0.76 %: GPM decides";
    EXPECT_NEAR(compute_bound(124'000, 9620), 9.9e6, 1e-3) << "SM active 96 %";
}

TEST(Pools, SlicesOfEachKindOfTick) {
    const Thresholds th;
    {
        PoolTimes p{};
        CardProfile prof;
        const CardTick t = tick_with({s(5), 0, 0, s(5)}, s(5), 50, 40000);
        add_to_pools(t, classify(t, th), pattern_of(t), 40000, false, p, prof);
        EXPECT_DOUBLE_EQ(p[static_cast<std::size_t>(Pool::stall)], static_cast<double>(s(5)));
        EXPECT_DOUBLE_EQ(p[static_cast<std::size_t>(Pool::held_office)], 0.0);
        EXPECT_EQ(prof.bursty_us, k_tick);
        EXPECT_DOUBLE_EQ(prof.bursty_util_us, 50.0 * static_cast<double>(k_tick));
    }
    {
        PoolTimes p{};
        CardProfile prof;
        const CardTick t = tick_with({0, s(10), 0, 0}, s(10), 45, 30000);
        add_to_pools(t, classify(t, th), pattern_of(t), 30000, true, p, prof);
        EXPECT_NEAR(p[static_cast<std::size_t>(Pool::headroom_under)], 5.5e6, 1e-3);
        EXPECT_EQ(prof.steady_under_us, k_tick);
        EXPECT_EQ(prof.off_hours_us, k_tick);
        EXPECT_DOUBLE_EQ(prof.steady_under_held_mib_us, 30000.0 * static_cast<double>(k_tick));
    }
    {
        PoolTimes p{};
        CardProfile prof;
        const CardTick t = tick_with({0, 0, 0, s(10)}, s(10), 95, 50000);
        add_to_pools(t, classify(t, th), pattern_of(t), 50000, false, p, prof);
        EXPECT_NEAR(p[static_cast<std::size_t>(Pool::compute_bound)], 9.5e6, 1e-3);
        EXPECT_NEAR(p[static_cast<std::size_t>(Pool::headroom_busy)], 0.5e6, 1e-3);
        EXPECT_EQ(prof.steady_compute_bound_us, k_tick);
    }
    {
        PoolTimes p{};
        CardProfile prof;
        const CardTick t = tick_with({s(10), 0, 0, 0}, 0, 1, 8000);
        add_to_pools(t, classify(t, th), pattern_of(t), 8000, true, p, prof);
        EXPECT_DOUBLE_EQ(p[static_cast<std::size_t>(Pool::held_off_hours)],
                         static_cast<double>(k_tick));
        EXPECT_DOUBLE_EQ(prof.idle_held_mib_us, 8000.0 * static_cast<double>(k_tick));
        const CardTick free_card = tick_with({s(10), 0, 0, 0}, 0, 0);
        add_to_pools(free_card, classify(free_card, th), pattern_of(free_card), 0, false, p, prof);
        EXPECT_DOUBLE_EQ(p[static_cast<std::size_t>(Pool::idle_office)],
                         static_cast<double>(k_tick));
    }
}

RC_GTEST_PROP(Pools, DisjointSlicesWithinTheTickAndMatchingTheClassification, ()) {
    std::array<DurationUs, 4> b{};
    DurationUs left = k_tick;
    for (std::size_t i = 0; i < 3; ++i) {
        b[i] = *rc::gen::inRange<DurationUs>(0, left + 1);
        left -= b[i];
    }
    b[3] = left;
    const DurationUs active = b[1] + b[2] + b[3];
    const double util = *rc::gen::inRange(0, 1001) / 10.0;
    const auto held = *rc::gen::inRange<std::int64_t>(0, 500);
    const CardTick t = tick_with(b, active, util, held);
    const Thresholds th;
    const StateTimes st = classify(t, th);
    PoolTimes p{};
    CardProfile prof;
    const Pattern pattern = pattern_of(t);
    add_to_pools(t, st, pattern, held, *rc::gen::arbitrary<bool>(), p, prof);
    double sum = 0;
    for (const double v : p) {
        RC_ASSERT(v >= 0.0);
        sum += v;
    }
    RC_ASSERT(sum <= static_cast<double>(k_tick) + 1e-6);
    if (pattern != Pattern::bursty) {
        const auto at = [&](Pool x) { return p[static_cast<std::size_t>(x)]; };
        RC_ASSERT(at(Pool::held_office) + at(Pool::held_off_hours) ==
                  static_cast<double>(st.idle_held));
        RC_ASSERT(at(Pool::idle_office) + at(Pool::idle_off_hours) ==
                  static_cast<double>(st.truly_idle));
    }
}

TEST(Window, IdentityTimePerGpuAddsUpToItsTotals) {
    WindowAccumulator acc(Thresholds{}, 0, [](TimeUs) { return std::pair<int, int>{2, 10}; });
    for (int i = 0; i < 4; ++i) {
        CardTick t = tick_with({0, s(10), 0, 0}, s(10), 45);
        t.t0 = i * k_tick;
        t.gpu = static_cast<std::uint32_t>(1 + i % 2);
        t.processes.push_back(
            ProcTick{7, telemetry::ProcessType::compute, 1000, 45.0, std::nullopt, std::nullopt});
        acc.add(t);
    }
    const IdentityTotals& id = acc.identities().at(7);
    ASSERT_EQ(id.by_gpu.size(), 2u);
    DurationUs active = 0;
    for (const IdentityGpuTime& g : id.by_gpu) {
        active += g.active_us;
        EXPECT_EQ(g.active_us, 2 * k_tick);
    }
    EXPECT_EQ(active, id.active_us);
    EXPECT_EQ(acc.gpus().at(1).profile.steady_under_us, 2 * k_tick);
    EXPECT_EQ(acc.gpus().at(1).profile.office_us, 2 * k_tick);
}

} // namespace pools_test
} // namespace gua::audit

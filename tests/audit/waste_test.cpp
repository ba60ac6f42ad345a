// SPDX-License-Identifier: Apache-2.0
// Waste: idle-held vs truly-idle GPU-hours and equivalent GPUs, the 20 % rule, and display
// rounding that always adds up to 100 %.
#include "audit/waste.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace gua::audit {
namespace {

StateTimes times(DurationUs active, DurationUs idle_held, DurationUs truly_idle,
                 DurationUs unmeasured = 0) {
    return StateTimes{active, idle_held, truly_idle, unmeasured};
}

TEST(Waste, IdleHeldAndTrulyIdleAreSeparate) {
    // Two cards over 2 h: one idle-held 2 h, the other idle-held 1 h and truly idle 1 h.
    const Waste w =
        compute_waste({times(0, 2 * k_us_per_hour, 0), times(0, k_us_per_hour, k_us_per_hour)}, 0);
    EXPECT_DOUBLE_EQ(w.idle_held_gpu_hours, 3.0);
    EXPECT_DOUBLE_EQ(w.truly_idle_gpu_hours, 1.0);
    EXPECT_DOUBLE_EQ(w.idle_held_share, 0.75);
    EXPECT_DOUBLE_EQ(w.truly_idle_share, 0.25);
    EXPECT_DOUBLE_EQ(w.idle_held_equiv_gpus, 1.5);
    EXPECT_DOUBLE_EQ(w.truly_idle_equiv_gpus, 0.5);
    EXPECT_EQ(w.cards_in_window, 2U);
    EXPECT_DOUBLE_EQ(w.measured_gpus, 2.0);
}

TEST(Waste, OneIdleHeldAndOneTrulyIdleCardOfTwoIsOneGpuEach) {
    const Waste w = compute_waste({times(0, k_us_per_day, 0), times(0, 0, k_us_per_day)}, 0);
    EXPECT_DOUBLE_EQ(w.idle_held_share, 0.5);
    EXPECT_DOUBLE_EQ(w.truly_idle_share, 0.5);
    EXPECT_DOUBLE_EQ(w.idle_held_equiv_gpus, 1.0);
    EXPECT_DOUBLE_EQ(w.truly_idle_equiv_gpus, 1.0);
    EXPECT_DOUBLE_EQ(w.idle_held_gpu_hours, 24.0);
}

TEST(Waste, UnmeasuredTimeIsExcludedFromShares) {
    // 1 h active + 1 h idle-held measured of 10 h: the measured capacity is 0.2 of a card.
    const Waste w = compute_waste({times(k_us_per_hour, k_us_per_hour, 0, 8 * k_us_per_hour)}, 0);
    EXPECT_DOUBLE_EQ(w.idle_held_share, 0.5);
    EXPECT_DOUBLE_EQ(w.measured_gpus, 0.2);
    EXPECT_DOUBLE_EQ(w.idle_held_equiv_gpus, 0.5 * 0.2);
}

TEST(Waste, UnmeasuredMigInstancesAreNoUnusedCapacity) {
    // One idle plain card and two MIG instances without any utilization reading, all recorded
    // for the same hour: one GPU is equivalently unused, not three.
    const Waste w = compute_waste(
        {times(0, 0, k_us_per_hour), times(0, 0, 0, k_us_per_hour), times(0, 0, 0, k_us_per_hour)},
        0);
    EXPECT_EQ(w.cards_in_window, 3U);
    EXPECT_DOUBLE_EQ(w.measured_gpus, 1.0);
    EXPECT_DOUBLE_EQ(w.truly_idle_equiv_gpus, 1.0);
    EXPECT_DOUBLE_EQ(w.idle_held_equiv_gpus, 0.0);
}

TEST(Waste, EmptyWindowIsZero) {
    const Waste w = compute_waste({}, 0);
    EXPECT_EQ(w.idle_held_share, 0.0);
    EXPECT_EQ(w.truly_idle_equiv_gpus, 0.0);
    EXPECT_FALSE(w.policy_problem);
    EXPECT_TRUE(w.verdict_certain);
}

TEST(Waste, TwentyPercentRuleIsStrictlyAbove) {
    EXPECT_FALSE(compute_waste({times(80, 20, 0)}, 0).policy_problem);
    EXPECT_DOUBLE_EQ(compute_waste({times(80, 20, 0)}, 0).idle_held_share, 0.2);
    EXPECT_TRUE(compute_waste({times(7999999, 2000001, 0)}, 0).policy_problem);
    EXPECT_FALSE(compute_waste({times(8000001, 1999999, 0)}, 0).policy_problem);
    EXPECT_FALSE(compute_waste({times(0, 0, 100)}, 0).policy_problem);
    EXPECT_TRUE(compute_waste({times(0, 100, 0)}, 0).policy_problem);
    EXPECT_TRUE(compute_waste({times(0, 100, 0)}, 0).verdict_certain);
}

TEST(Waste, UnmeasuredTimeThatCouldCrossTheRuleMakesTheVerdictUncertain) {
    // Idle-held 18 % with 5 % unmeasured: between 18 % and 23 % of the card time.
    const Waste w = compute_waste({times(77, 18, 0, 5)}, 0);
    EXPECT_FALSE(w.verdict_certain);
    EXPECT_DOUBLE_EQ(w.idle_held_share_low, 0.18);
    EXPECT_DOUBLE_EQ(w.idle_held_share_high, 0.23);
    // 10 % with 5 % unmeasured stays within the rule whatever the unmeasured time was.
    const Waste within = compute_waste({times(85, 10, 0, 5)}, 0);
    EXPECT_TRUE(within.verdict_certain);
    EXPECT_FALSE(within.policy_problem);
    EXPECT_DOUBLE_EQ(within.idle_held_share_high, 0.15);
}

TEST(Waste, SnapshotErrorWidensTheBoundsBothWays) {
    // 25 % idle-held, of 100 s 10 s measured by snapshots: 15 %–35 %, could be within.
    const Waste w = compute_waste({times(75, 25, 0)}, 10);
    EXPECT_DOUBLE_EQ(w.idle_held_share_low, 0.15);
    EXPECT_DOUBLE_EQ(w.idle_held_share_high, 0.35);
    EXPECT_FALSE(w.verdict_certain);
    EXPECT_TRUE(w.policy_problem); // the best estimate stays above
    // 40 % idle-held with 10 % snapshots: at least 30 %, certainly above.
    const Waste above = compute_waste({times(60, 40, 0)}, 10);
    EXPECT_TRUE(above.verdict_certain);
    EXPECT_TRUE(above.policy_problem);
}

TEST(Waste, RoundedPercentagesOfTheClassicDemo) {
    const auto p = rounded_percentages({12.0 / 90, 42.0 / 90, 36.0 / 90}, 1);
    ASSERT_EQ(p.size(), 3U);
    EXPECT_DOUBLE_EQ(p[0], 13.3);
    EXPECT_DOUBLE_EQ(p[1], 46.7);
    EXPECT_DOUBLE_EQ(p[2], 40.0);
}

TEST(Waste, RoundedPercentagesLargestRemainder) {
    // Three thirds: 33.3 each leaves 0.1 for one of them.
    const auto p = rounded_percentages({1.0, 1.0, 1.0}, 1);
    EXPECT_DOUBLE_EQ(p[0] + p[1] + p[2], 100.0);
    EXPECT_DOUBLE_EQ(p[0], 33.4);
    EXPECT_DOUBLE_EQ(p[1], 33.3);
    const auto whole = rounded_percentages({0.005, 0.005, 0.99}, 0);
    EXPECT_DOUBLE_EQ(whole[0] + whole[1] + whole[2], 100.0);
    EXPECT_DOUBLE_EQ(whole[2], 99.0);
}

TEST(Waste, RoundedPercentagesAllZero) {
    const auto p = rounded_percentages({0.0, 0.0, 0.0, 0.0}, 1);
    ASSERT_EQ(p.size(), 4U);
    for (double v : p) {
        EXPECT_EQ(v, 0.0);
    }
    EXPECT_TRUE(rounded_percentages({}, 1).empty());
}

RC_GTEST_PROP(Waste, RoundedPercentagesAlwaysSumTo100, ()) {
    const std::vector<double> shares = *rc::gen::nonEmpty(rc::gen::container<std::vector<double>>(
        rc::gen::map(rc::gen::inRange(0, 1000001), [](int v) { return v / 1e6; })));
    const int decimals = *rc::gen::inRange(0, 3);
    const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
    const auto p = rounded_percentages(shares, decimals);
    RC_ASSERT(p.size() == shares.size());
    const double scale = std::pow(10.0, decimals);
    if (sum <= 0) {
        for (double v : p) {
            RC_ASSERT(v == 0.0);
        }
        return;
    }
    long long units = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double u = p[i] * scale;
        RC_ASSERT(std::abs(u - std::round(u)) < 1e-6); // a whole number of display units
        units += std::llround(u);
        // Largest remainder: within one display unit of the exact value.
        RC_ASSERT(std::abs(p[i] - shares[i] / sum * 100.0) < 1.0 / scale + 1e-9);
    }
    RC_ASSERT(units == std::llround(100.0 * scale));
    RC_ASSERT(std::abs(std::accumulate(p.begin(), p.end(), 0.0) - 100.0) < 1e-9);
}

} // namespace
} // namespace gua::audit

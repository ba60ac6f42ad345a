// SPDX-License-Identifier: Apache-2.0
// Prices, integer-cent costs and run-rates: exact to the cent, monthly = hourly × 720 exactly.
#include "audit/cost.hpp"
#include "audit/waste.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <numeric>

namespace gua::audit {
namespace {

__extension__ using Int128 = __int128;

/// Reference: cents = time × price / (3.6e9 µs × 1e4 micros), rounded half up, in 128 bits.
std::int64_t reference_cents(DurationUs t, std::int64_t price) {
    const Int128 num = static_cast<Int128>(t) * price;
    const Int128 den = static_cast<Int128>(k_us_per_hour) * k_micros_per_cent;
    return static_cast<std::int64_t>((2 * num + den) / (2 * den));
}

TEST(Pricing, FirstMatchInTableOrderCaseInsensitiveElseDefault) {
    Pricing p;
    p.models = {{"h100 nvl", 5 * k_micros_per_unit},
                {"H100", 4 * k_micros_per_unit},
                {"A100", 2 * k_micros_per_unit}};
    p.default_micros_per_gpu_hour = 1'250'000;
    EXPECT_EQ(price_micros(p, "NVIDIA H100 NVL"), 5'000'000);
    EXPECT_EQ(price_micros(p, "NVIDIA H100 80GB HBM3"), 4'000'000);
    EXPECT_EQ(price_micros(p, "NVIDIA A100-SXM4-80GB"), 2'000'000);
    EXPECT_EQ(price_micros(p, "NVIDIA L40S"), 1'250'000);
    p.override_micros_per_gpu_hour = 3'500'000;
    EXPECT_EQ(price_micros(p, "NVIDIA H100 80GB HBM3"), 3'500'000);
    EXPECT_EQ(price_micros(p, "NVIDIA L40S"), 3'500'000);
}

TEST(Pricing, BuiltInDefaultsAreTheIssueExamples) {
    const Pricing p;
    EXPECT_FALSE(p.configured);
    EXPECT_EQ(p.currency, "USD");
    EXPECT_EQ(price_micros(p, "NVIDIA H100 80GB HBM3"), 4'000'000);
    EXPECT_EQ(price_micros(p, "NVIDIA A100 80GB PCIe"), 2'000'000);
    EXPECT_EQ(price_micros(p, "Tesla T4"), 1'000'000);
}

TEST(Pricing, ToMicrosRoundsOnceAndRejectsNonsense) {
    EXPECT_EQ(to_micros(3.50), 3'500'000);
    EXPECT_EQ(to_micros(2.4567891), 2'456'789);
    EXPECT_EQ(to_micros(0.0), 0);
    EXPECT_EQ(to_micros(1000.0), k_max_micros_per_gpu_hour);
    EXPECT_FALSE(to_micros(1000.01));
    EXPECT_FALSE(to_micros(-0.01));
    EXPECT_FALSE(to_micros(std::numeric_limits<double>::quiet_NaN()));
    EXPECT_FALSE(to_micros(std::numeric_limits<double>::infinity()));
}

TEST(CostCents, ExactValues) {
    EXPECT_EQ(cost_cents(k_us_per_hour, 2'000'000), 200);
    EXPECT_EQ(cost_cents(30 * k_us_per_minute, 3'500'000), 175);
    EXPECT_EQ(cost_cents(k_us_per_hour, 18'000), 2); // 1.8 cents
    EXPECT_EQ(cost_cents(k_us_per_hour, 5'000), 1);  // 0.5 cents rounds half up
    EXPECT_EQ(cost_cents(k_us_per_hour, 4'999), 0);  // 0.4999 cents
    EXPECT_EQ(cost_cents(DurationUs{1}, k_max_micros_per_gpu_hour), 0);
    EXPECT_EQ(cost_cents(DurationUs{0}, 4'000'000), 0);
    EXPECT_EQ(cost_cents(DurationUs{-5}, 4'000'000), 0);
    // 100 GPU-years at the highest price: 876,000 h × 100,000 cents.
    EXPECT_EQ(cost_cents(876'000 * k_us_per_hour, k_max_micros_per_gpu_hour), 87'600'000'000);
    // One awkward second at $2.4567891 → 0.06824 cents.
    EXPECT_EQ(cost_cents(k_us_per_second * 3601, 2'456'789), 246);
    EXPECT_EQ(share_cost_cents(1.6e9, 2'000'000), cost_cents(DurationUs{1'600'000'000}, 2'000'000));
}

RC_GTEST_PROP(CostCents, MatchesThe128BitReference, ()) {
    const auto t = *rc::gen::inRange<DurationUs>(0, 100 * 365 * k_us_per_day);
    const auto p = *rc::gen::inRange<std::int64_t>(0, k_max_micros_per_gpu_hour + 1);
    RC_ASSERT(cost_cents(t, p) == reference_cents(t, p));
}

RC_GTEST_PROP(CostCents, StatesAddUpToTheirTotal, ()) {
    StateTimes s;
    s.active = *rc::gen::inRange<DurationUs>(0, 1000 * k_us_per_hour);
    s.idle_held = *rc::gen::inRange<DurationUs>(0, 1000 * k_us_per_hour);
    s.truly_idle = *rc::gen::inRange<DurationUs>(0, 1000 * k_us_per_hour);
    s.unmeasured = *rc::gen::inRange<DurationUs>(0, 1000 * k_us_per_hour);
    const auto p = *rc::gen::inRange<std::int64_t>(0, k_max_micros_per_gpu_hour + 1);
    const StateCost c = cost_of(s, p);
    RC_ASSERT(c.total_cents() == c.active_cents + c.idle_held_cents + c.truly_idle_cents);
    RC_ASSERT(c.waste_cents() == c.idle_held_cents + c.truly_idle_cents);
    // Each state is one rounding step away from exact, so the total is within 1.5 cents.
    const std::int64_t exact = reference_cents(s.active + s.idle_held + s.truly_idle, p);
    RC_ASSERT(std::llabs(c.total_cents() - exact) <= 2);
}

TEST(RunRate, MonthlyAndYearlyAreExactMultiplesForAwkwardRates) {
    for (const double micros :
         {1.0, 4'999.0, 5'000.0, 1'234'567.0, 2'456'789.123, 3'333'333.3333, 99'999'999.5, 7e11}) {
        const RunRate r = run_rate(micros);
        EXPECT_EQ(r.monthly_cents(), r.hourly_cents * 720) << micros;
        EXPECT_EQ(r.yearly_cents(), r.hourly_cents * 8760) << micros;
    }
    EXPECT_EQ(run_rate(1'234'567.0).hourly_cents, 123);
    EXPECT_EQ(run_rate(1'234'567.0).monthly_cents(), 88'560);
    EXPECT_EQ(run_rate(1'234'567.0).yearly_cents(), 1'077'480);
    EXPECT_EQ(run_rate(3'333'333.3333).hourly_cents, 333);
    EXPECT_EQ(run_rate(3'333'333.3333).monthly_cents(), 239'760);
    EXPECT_EQ(run_rate(5'000.0).hourly_cents, 1);
    EXPECT_EQ(run_rate(4'999.0).hourly_cents, 0);
    EXPECT_EQ(k_hours_per_month, 720);
    EXPECT_EQ(k_hours_per_year, 8760);
}

RC_GTEST_PROP(RunRate, OneRoundingStepAndExactMultiples, ()) {
    const double micros =
        static_cast<double>(*rc::gen::inRange<std::int64_t>(0, 1'000'000'000'000)) / 7.0;
    const RunRate r = run_rate(micros);
    RC_ASSERT(std::abs(static_cast<double>(r.hourly_cents) * 10'000.0 - micros) <= 5'000.0);
    RC_ASSERT(r.monthly_cents() == r.hourly_cents * 24 * 30);
    RC_ASSERT(r.yearly_cents() == r.hourly_cents * 24 * 365);
}

TEST(RunRate, HourlyMicrosIsPriceTimesShare) {
    EXPECT_DOUBLE_EQ(hourly_micros(30.0, 60, 4'000'000), 2'000'000.0);
    EXPECT_DOUBLE_EQ(hourly_micros(30.0, 0, 4'000'000), 0.0);
    EXPECT_DOUBLE_EQ(hourly_micros(-1.0, 60, 4'000'000), 0.0);
}

RC_GTEST_PROP(Shares, CostAndBucketSharesSumToExactly100, ()) {
    const auto values = *rc::gen::container<std::vector<std::int64_t>>(
        4, rc::gen::inRange<std::int64_t>(0, 1'000'000'000));
    std::vector<double> shares(values.begin(), values.end());
    const std::vector<double> p = rounded_percentages(shares, 1);
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    if (std::accumulate(values.begin(), values.end(), std::int64_t{0}) == 0) {
        RC_ASSERT(sum == 0.0);
    } else {
        RC_ASSERT(std::llround(sum * 10) == 1000);
    }
}

} // namespace
} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Memory trends: the least-squares slope against lines built in the test, the growth test's
// thresholds, time to full, and the book's window.
#include "audit/memory_trend.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gua::audit {
namespace memory_trend_test {

constexpr DurationUs k_s = k_us_per_second;

std::deque<MemorySample> line(double mib0, double mib_per_s, int n, DurationUs step) {
    std::deque<MemorySample> d;
    for (int i = 0; i < n; ++i) {
        d.push_back(MemorySample{
            i * step, std::llround(mib0 + mib_per_s * static_cast<double>(i * step / k_s))});
    }
    return d;
}

TEST(MemoryTrend, ExactLineGivesItsSlope) {
    const auto t = memory_trend(line(1000, 2.0, 31, 10 * k_s)); // 2 MiB/s over 300 s
    ASSERT_TRUE(t);
    EXPECT_NEAR(t->mib_per_hour, 7200.0, 1e-6);
    EXPECT_NEAR(t->r2, 1.0, 1e-12);
    EXPECT_EQ(t->span_us, 300 * k_s);
    EXPECT_EQ(t->samples, 31U);
    EXPECT_TRUE(is_growing(*t));
    // 36,000 MiB free at 7,200 MiB/h: five hours.
    EXPECT_EQ(time_to_full(*t, 36000), 5 * k_us_per_hour);
}

TEST(MemoryTrend, NoisyLineWithinTenPercent) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0, 20);
    std::deque<MemorySample> d = line(4000, 1.0, 61, 5 * k_s); // 3,600 MiB/h
    for (MemorySample& s : d) {
        s.mib += std::llround(noise(rng));
    }
    const auto t = memory_trend(d);
    ASSERT_TRUE(t);
    EXPECT_NEAR(t->mib_per_hour, 3600.0, 360.0);
    EXPECT_TRUE(is_growing(*t));
    const auto full = time_to_full(*t, 7200);
    ASSERT_TRUE(full);
    EXPECT_NEAR(static_cast<double>(*full), 2.0 * k_us_per_hour, 0.2 * k_us_per_hour);
}

TEST(MemoryTrend, TooFewOrTooShort) {
    EXPECT_FALSE(memory_trend(line(0, 10, 3, 30 * k_s))) << "three readings";
    EXPECT_FALSE(memory_trend(line(0, 10, 10, k_s))) << "9 s of readings";
    EXPECT_TRUE(memory_trend(line(0, 10, 5, 5 * k_s))) << "20 s, five readings";
}

TEST(MemoryTrend, FlatShrinkingSmallOrJumpyIsNoGrowth) {
    const auto flat = memory_trend(line(8192, 0, 20, 10 * k_s));
    ASSERT_TRUE(flat);
    EXPECT_EQ(flat->mib_per_hour, 0.0);
    EXPECT_FALSE(is_growing(*flat));
    EXPECT_FALSE(time_to_full(*flat, 1000));

    const auto shrinking = memory_trend(line(8192, -1, 20, 10 * k_s));
    ASSERT_TRUE(shrinking);
    EXPECT_LT(shrinking->mib_per_hour, 0.0);
    EXPECT_FALSE(is_growing(*shrinking));

    // 60 MiB over the span: below the 64 MiB an allocator's block growth can explain.
    const auto small = memory_trend(line(8192, 0.2, 31, 10 * k_s));
    ASSERT_TRUE(small);
    EXPECT_FALSE(is_growing(*small));

    // A sawtooth (allocate, free, allocate) does not fit a line at all.
    std::deque<MemorySample> saw;
    for (int i = 0; i < 40; ++i) {
        saw.push_back(MemorySample{i * 10 * k_s, i % 2 == 0 ? 8000 : 16000});
    }
    const auto jumpy = memory_trend(saw);
    ASSERT_TRUE(jumpy);
    EXPECT_LT(jumpy->r2, k_growth_min_r2);
    EXPECT_FALSE(is_growing(*jumpy));
}

TEST(TrendBook, KeepsTheWindowAndReplacesReReads) {
    TrendBook book;
    const HoldingKey key{"GPU-a", {42, 7}};
    for (int i = 0; i <= 60; ++i) { // one reading a minute for an hour, +10 MiB each
        book.add(key, MemorySample{i * k_us_per_minute, 1000 + 10 * i});
    }
    const auto t = book.trend(key);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->span_us, k_trend_window_us) << "only the last 30 minutes";
    EXPECT_EQ(t->samples, 31U);
    EXPECT_NEAR(t->mib_per_hour, 600.0, 1e-6);
    // A re-read of the newest tick replaces it rather than adding a point.
    book.add(key, MemorySample{60 * k_us_per_minute, 1600});
    EXPECT_EQ(book.trend(key)->samples, 31U);
    EXPECT_FALSE(book.trend(HoldingKey{"GPU-a", {43, 7}}));
    book.forget_before(61 * k_us_per_minute);
    EXPECT_FALSE(book.trend(key)) << "gone processes are forgotten";
}

TEST(TrendBook, CardReadingsSumAProcessAndSkipUnknowns) {
    TrendBook book;
    // Four ticks a minute apart. Process 42 is listed twice (compute 1000 + 100 i MiB and
    // graphics 24 MiB): its samples are the sums, 1024 + 100 i, a line of 6000 MiB/h. Process 43
    // has one entry with an unknown reading at the third tick: that tick gives it no sample,
    // so it has three readings, too few for a trend.
    for (int i = 0; i < 4; ++i) {
        const std::optional<std::int64_t> mib43 =
            i == 2 ? std::nullopt : std::optional<std::int64_t>(500);
        add_card_readings(
            book, "GPU-a", (i + 1) * k_us_per_minute,
            {{{42, 7}, 1000 + 100 * i}, {{42, 7}, 24}, {{43, 9}, 500}, {{43, 9}, mib43}});
    }
    const auto t42 = book.trend(HoldingKey{"GPU-a", {42, 7}});
    ASSERT_TRUE(t42);
    EXPECT_EQ(t42->samples, 4U);
    EXPECT_NEAR(t42->mib_per_hour, 6000.0, 1e-6);
    EXPECT_EQ(t42->span_us, 3 * k_us_per_minute);
    EXPECT_FALSE(book.trend(HoldingKey{"GPU-a", {43, 9}})) << "a partial sum would be a drop";
    EXPECT_FALSE(book.trend(HoldingKey{"GPU-b", {42, 7}})) << "kept per card";
}

} // namespace memory_trend_test
} // namespace gua::audit

// The sample-ring rules of nvml-notes §14 on hand-made batches (no driver involved).
#include "nvml/sample_cursor.hpp"

#include <gtest/gtest.h>

namespace gua::nvml {
namespace {

constexpr std::uint64_t k_t0 = 1'700'000'000'000'000ULL;
constexpr std::uint64_t k_period = 166'667;

std::vector<RingSample> ramp(std::uint64_t from, int count, double pct) {
    std::vector<RingSample> out;
    for (int i = 1; i <= count; ++i) {
        out.push_back({from + static_cast<std::uint64_t>(i) * k_period, pct});
    }
    return out;
}

RingFold fold_of(UtilCursor& cursor, std::vector<RingSample> batch, DurationUs span_us,
                 std::optional<double> snapshot_pct) {
    RingFold out;
    cursor.fold(batch, span_us, snapshot_pct, out);
    return out;
}

PidUtils fold_of(ProcessUtilCursor& cursor, const std::vector<ProcessUtilEntry>& entries,
                 const std::vector<std::uint32_t>& live_pids, int& junk) {
    PidUtils out;
    cursor.fold(entries, live_pids, junk, out);
    return out;
}

double mean(const RingFold& fold) {
    double sum = 0;
    double weight = 0;
    for (const auto& s : fold.samples) {
        sum += s.pct * static_cast<double>(s.weight_us);
        weight += static_cast<double>(s.weight_us);
    }
    return sum / weight;
}

TEST(NvmlSampleCursor, PrimingDiscardsHistoryAndSetsTheCursor) {
    UtilCursor cursor;
    EXPECT_FALSE(cursor.primed());
    cursor.prime(ramp(k_t0, 100, 100));
    EXPECT_TRUE(cursor.primed());
    EXPECT_EQ(cursor.cursor_us(), k_t0 + 100 * k_period);
    // The same history replayed is not newer than the cursor: nothing but idle remains.
    const RingFold fold = fold_of(cursor, ramp(k_t0, 100, 100), 5 * k_us_per_second, 0.0);
    ASSERT_EQ(fold.samples.size(), 1u);
    EXPECT_EQ(fold.samples[0].pct, 0);
    EXPECT_EQ(fold.samples[0].weight_us, 5 * k_us_per_second);
}

TEST(NvmlSampleCursor, WeightsByGapCappedAtTheMedianAndFillsTheUncoveredSpan) {
    UtilCursor cursor;
    cursor.prime({{k_t0, 0}});
    // 6 samples (1 s) of 90 % in a 3 s poll span: the other 2 s are idle.
    std::vector<RingSample> batch = ramp(k_t0, 6, 90);
    std::reverse(batch.begin(), batch.end());
    batch.push_back({0, 55});       // ts 0: dropped
    batch.push_back({k_t0, 77});    // == cursor: dropped
    batch.push_back(batch.front()); // duplicate timestamp: dropped
    const RingFold fold = fold_of(cursor, batch, 3 * k_us_per_second, 0.0);
    ASSERT_EQ(fold.samples.size(), 7u);
    EXPECT_EQ(fold.junk, 0);
    EXPECT_NEAR(mean(fold), 30.0, 0.01);
    EXPECT_EQ(cursor.cursor_us(), k_t0 + 6 * k_period);
}

TEST(NvmlSampleCursor, UsesAPositiveSnapshotForUncoveredTime) {
    UtilCursor cursor;
    cursor.prime({});
    const RingFold fold = fold_of(cursor, {}, 2 * k_us_per_second, 40.0);
    ASSERT_EQ(fold.samples.size(), 1u);
    EXPECT_EQ(fold.samples[0].pct, 40.0);
}

TEST(NvmlSampleCursor, DropsAndCountsJunkValues) {
    UtilCursor cursor;
    cursor.prime({{k_t0, 0}});
    std::vector<RingSample> batch = ramp(k_t0, 6, 50);
    batch[2].pct = 250;
    batch[4].pct = 4e9;
    const RingFold fold = fold_of(cursor, batch, k_us_per_second, 0.0);
    EXPECT_EQ(fold.junk, 2);
    EXPECT_EQ(fold.samples.size(), 4u);
    EXPECT_NEAR(mean(fold), 50.0, 1e-9);
}

TEST(NvmlSampleCursor, DetectsARingThatOverflowedBetweenPolls) {
    UtilCursor cursor;
    cursor.prime(ramp(k_t0, 100, 0));
    const std::uint64_t later = cursor.cursor_us() + 60 * k_us_per_second;
    const RingFold fold = fold_of(cursor, ramp(later, 100, 70), 77 * k_us_per_second, 0.0);
    EXPECT_TRUE(fold.lost_samples);
    EXPECT_NEAR(mean(fold), 70.0, 1e-9); // no idle filler for time the ring no longer holds
}

TEST(NvmlSampleCursor, ResetsAfterThreeDryPollsWhileTheSnapshotIsBusy) {
    UtilCursor cursor;
    cursor.prime({{k_t0, 10}});
    for (int i = 0; i < 2; ++i) {
        fold_of(cursor, {}, k_us_per_second, 80.0);
        EXPECT_TRUE(cursor.primed());
    }
    fold_of(cursor, {}, k_us_per_second, 80.0);
    EXPECT_FALSE(cursor.primed());
    EXPECT_EQ(cursor.cursor_us(), 0u);
}

TEST(NvmlSampleCursor, ProcessUtilKeepsLivePidsAndZeroesAbsentOnes) {
    ProcessUtilCursor cursor;
    cursor.prime({{10, k_t0, 30}, {11, k_t0 + 5, 250}});
    EXPECT_EQ(cursor.cursor_us(), k_t0);
    int junk = 0;
    const auto util = fold_of(cursor,
                              {{10, k_t0 + 100, 40},
                               {10, k_t0 + 200, 60},
                               {12, k_t0 + 300, 90},
                               {10, k_t0 + 400, 101},
                               {11, k_t0, 20}},
                              {10, 11}, junk);
    EXPECT_EQ(junk, 2);
    ASSERT_EQ(util.size(), 2u);
    EXPECT_EQ(util.at(10), 60.0);
    EXPECT_EQ(util.at(11), 0.0);
    EXPECT_EQ(cursor.cursor_us(), k_t0 + 200);
}

} // namespace
} // namespace gua::nvml

// SPDX-License-Identifier: Apache-2.0
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
                 const std::vector<std::uint32_t>& live_pids, int& junk, int& unlisted) {
    PidUtils out;
    cursor.fold(entries, live_pids, junk, unlisted, out);
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

TEST(NvmlSampleCursor, WeightsByGapCappedAtThePeriodAndFillsTheUncoveredSpanWithIdle) {
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

TEST(NvmlSampleCursor, AnEmptyRingWhileTheSnapshotIsBusyIsUnmeasuredNotFilled) {
    UtilCursor cursor;
    cursor.prime(ramp(k_t0, 100, 0));
    const RingFold fold = fold_of(cursor, {}, 2 * k_us_per_second, 40.0);
    EXPECT_TRUE(fold.samples.empty());
    EXPECT_EQ(fold.unmeasured_us, 2 * k_us_per_second);
    // An empty ring with an idle snapshot is idle time the ring could hold.
    const RingFold idle = fold_of(cursor, {}, 2 * k_us_per_second, 0.0);
    ASSERT_EQ(idle.samples.size(), 1u);
    EXPECT_EQ(idle.samples[0].pct, 0.0);
    EXPECT_EQ(idle.unmeasured_us, 0);
}

TEST(NvmlSampleCursor, AGapTheRingCouldHoldIsIdleWhateverTheSnapshotSays) {
    UtilCursor cursor;
    cursor.prime(ramp(k_t0, 100, 0)); // capacity 100
    // A dry ring: 6 busy samples (1 s) at the end of a 5 s span, snapshot busy at the poll.
    const std::uint64_t cursor_at = cursor.cursor_us();
    const RingFold fold =
        fold_of(cursor, ramp(cursor_at + 4 * k_us_per_second, 6, 100), 5 * k_us_per_second, 100.0);
    EXPECT_FALSE(fold.lost_samples);
    EXPECT_EQ(fold.unmeasured_us, 0);
    EXPECT_NEAR(mean(fold), 100.0 * 6 * k_period / (5.0 * k_us_per_second), 0.01);
}

TEST(NvmlSampleCursor, CapacityIsTheLargestCountEverSeenAndSetsTheAffordableSpan) {
    constexpr std::uint64_t p = 100'000; // a 6-entry ring at 0.1 s
    const auto ring6 = [](std::uint64_t last) {
        std::vector<RingSample> out;
        for (std::uint64_t i = 0; i < 6; ++i) {
            out.push_back({last - (5 - i) * p, 50});
        }
        return out;
    };
    UtilCursor cursor;
    cursor.prime({}); // empty at start: nothing known
    EXPECT_EQ(cursor.capacity(), 0u);
    EXPECT_EQ(cursor.affordable_span_us(), k_us_per_second);
    // 0.6 s later the ring holds 6 entries, all written since: it covers the span.
    RingFold fold;
    std::vector<RingSample> batch = ring6(k_t0 + 6 * p);
    cursor.fold(batch, 6 * static_cast<DurationUs>(p), 50.0, fold, 6);
    EXPECT_FALSE(fold.lost_samples);
    EXPECT_EQ(cursor.capacity(), 6u);
    EXPECT_EQ(cursor.affordable_span_us(), 3 * static_cast<DurationUs>(p)); // 6 × 0.1 s / 2
    // 5 s later the ring holds the same 6 entries' worth: 4.4 s of samples were overwritten.
    batch = ring6(k_t0 + 56 * p);
    cursor.fold(batch, 50 * static_cast<DurationUs>(p), 50.0, fold, 6);
    EXPECT_TRUE(fold.lost_samples);
    EXPECT_EQ(fold.unmeasured_us, 44 * static_cast<DurationUs>(p));
    EXPECT_NEAR(mean(fold), 50.0, 1e-9);
    // A reply as long as the largest seen while the ring holds older entries lost nothing.
    batch = ring6(k_t0 + 62 * p);
    cursor.fold(batch, 6 * static_cast<DurationUs>(p), 50.0, fold, 9);
    EXPECT_FALSE(fold.lost_samples);
    EXPECT_EQ(cursor.capacity(), 9u);
}

// The time laid out idle and busy over 64 polls of a busy ring with 50 samples a second, polled
// every 100 ms and read later than the poll's instant by delays that vary from poll to poll (a
// loaded host, other cards read first). With `dry_first`, the ring first shows three periods
// without entries (a ring that stops writing while idle): those are idle.
std::pair<DurationUs, DurationUs> busy_ring_read_late(bool dry_first) {
    constexpr std::uint64_t p = 20'000;
    constexpr std::uint64_t poll = 100'000;
    const std::vector<std::uint64_t> delay = {0,      45'000, 0, 61'000, 5'000, 0,      30'000, 0,
                                              99'000, 0,      0, 21'000, 0,     40'000, 1'000,  0};
    const auto newest_at = [](std::uint64_t t) { return t / p * p; };
    UtilCursor cursor;
    std::vector<RingSample> history;
    for (std::uint64_t ts = newest_at(k_t0) - 9 * p; ts <= k_t0; ts += p) {
        history.push_back({ts, 100});
    }
    cursor.prime(history);
    RingFold fold;
    DurationUs idle = 0;
    DurationUs busy = 0;
    for (std::size_t n = 1; n <= 4 * delay.size(); ++n) {
        const std::uint64_t read_at = k_t0 + n * poll + delay[n % delay.size()];
        std::vector<RingSample> batch;
        const std::uint64_t first = cursor.cursor_us() + (dry_first && n == 1 ? 4 : 1) * p;
        for (std::uint64_t ts = first; ts <= newest_at(read_at); ts += p) {
            batch.push_back({ts, 100});
        }
        cursor.fold(batch, static_cast<DurationUs>(poll), 100.0, fold, 500);
        for (const telemetry::UtilSample& s : fold.samples) {
            (s.pct == 0 ? idle : busy) += s.weight_us;
        }
        EXPECT_EQ(fold.unmeasured_us, 0) << "poll " << n;
    }
    EXPECT_EQ(cursor.dry(), dry_first);
    return {idle, busy};
}

// A reply that reaches past the poll's instant must not make a later poll see whole periods
// without a sample: a busy ring never reads as idle, however late each read comes.
TEST(NvmlSampleCursor, ReadsLateByVaryingDelaysNeverMakeABusyRingIdle) {
    const auto [idle, busy] = busy_ring_read_late(false);
    EXPECT_EQ(idle, 0);
    // Every sample is laid out once: the 6.4 s polled, give or take the last read's delay.
    EXPECT_NEAR(static_cast<double>(busy), 6.4e6, 1e5);
}

TEST(NvmlSampleCursor, ReadsLateByVaryingDelaysNeverMakeABusyDryRingIdle) {
    const auto [idle, busy] = busy_ring_read_late(true);
    EXPECT_EQ(idle, 3 * 20'000); // the three periods without entries, nothing else
    EXPECT_NEAR(static_cast<double>(busy + idle), 6.4e6, 1e5);
}

// The driver's clock steps an hour ahead between two polls of a busy ring: the hour the
// timestamps skipped is not time, idle or otherwise, and does not make the ring look dry.
TEST(NvmlSampleCursor, AStepOfTheDriversClockIsNotAnHourOfIdleTime) {
    constexpr std::uint64_t p = 20'000;
    UtilCursor cursor;
    cursor.prime({{k_t0 - p, 100}, {k_t0, 100}});
    std::uint64_t newest = k_t0;
    const auto next = [&](std::uint64_t skip) {
        std::vector<RingSample> batch;
        for (int i = 1; i <= 5; ++i) {
            batch.push_back({newest + skip + static_cast<std::uint64_t>(i) * p, 100});
        }
        newest = batch.back().timestamp_us;
        RingFold fold;
        cursor.fold(batch, 100'000, 100.0, fold, 500);
        return fold;
    };
    const std::vector<std::uint64_t> skips = {0, 3600ULL * 1000 * 1000, 0};
    for (const std::uint64_t skip : skips) {
        const RingFold fold = next(skip);
        EXPECT_NEAR(mean(fold), 100.0, 1e-9) << "skip " << skip;
        EXPECT_EQ(fold.unmeasured_us, 0);
        EXPECT_FALSE(fold.lost_samples);
    }
    EXPECT_FALSE(cursor.dry());
}

TEST(NvmlSampleCursor, ASkippedPollIsNotCreditedToTheNextOne) {
    UtilCursor cursor;
    cursor.prime(ramp(k_t0, 100, 0));
    cursor.skip(5 * k_us_per_second); // the ring read failed: that span is unmeasured
    // The next reply holds both spans: 5 s at 100 %, then 5 s at 0 %.
    std::vector<RingSample> batch = ramp(cursor.cursor_us(), 30, 100);
    const std::vector<RingSample> idle = ramp(batch.back().timestamp_us, 30, 0);
    batch.insert(batch.end(), idle.begin(), idle.end());
    RingFold fold;
    cursor.fold(batch, 5 * k_us_per_second, 0.0, fold);
    EXPECT_NEAR(mean(fold), 0.0, 0.01); // timestamps are µs: a few µs of rounding
    EXPECT_EQ(fold.unmeasured_us, 0);
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
    EXPECT_EQ(fold.unmeasured_us, 2 * static_cast<DurationUs>(k_period)); // junk is not a reading
}

TEST(NvmlSampleCursor, DetectsARingThatOverflowedBetweenPolls) {
    UtilCursor cursor;
    cursor.prime(ramp(k_t0, 100, 0));
    const std::uint64_t later = cursor.cursor_us() + 60 * k_us_per_second;
    // The poll comes with the newest sample: 60 s of lost entries, then 100 surviving ones.
    const auto span = static_cast<DurationUs>(60 * k_us_per_second + 100 * k_period);
    const RingFold fold = fold_of(cursor, ramp(later, 100, 70), span, 0.0);
    EXPECT_TRUE(fold.lost_samples);
    EXPECT_NEAR(mean(fold), 70.0, 1e-9); // no idle filler for time the ring no longer holds
    // Unmeasured: from the cursor to the period of the oldest sample still held.
    EXPECT_EQ(fold.unmeasured_us, 60 * k_us_per_second);
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

// A ring still filling shows few entries; polls never come faster than 1.5 periods, since a poll
// within the running period finds nothing new (unmeasured while the card is busy).
TEST(NvmlSampleCursor, TheAffordableSpanIsAtLeastOneAndAHalfPeriods) {
    UtilCursor tiny;
    tiny.prime(ramp(k_t0, 2, 0)); // 2 entries: capacity × period / 2 would be one period
    EXPECT_EQ(tiny.affordable_span_us(), static_cast<DurationUs>(k_period) * 3 / 2);
}

TEST(NvmlSampleCursor, ProcessUtilKeepsLivePidsAndZeroesAbsentOnes) {
    ProcessUtilCursor cursor;
    cursor.prime({{10, k_t0, 30}, {11, k_t0 + 5, 250}});
    EXPECT_EQ(cursor.cursor_us(), k_t0);
    int junk = 0;
    int unlisted = 0;
    const auto util = fold_of(cursor,
                              {{10, k_t0 + 100, 40},
                               {10, k_t0 + 200, 60},
                               {12, k_t0 + 300, 90},
                               {10, k_t0 + 400, 101},
                               {11, k_t0, 20}},
                              {10, 11}, junk, unlisted);
    EXPECT_EQ(junk, 1);     // over 100 %: the driver's junk
    EXPECT_EQ(unlisted, 1); // pid 12 is not in the poll's lists: gua's own choice, not junk
    ASSERT_EQ(util.size(), 2u);
    EXPECT_EQ(util.at(10), 60.0);
    EXPECT_EQ(util.at(11), 0.0);
    EXPECT_EQ(cursor.cursor_us(), k_t0 + 200);
}

} // namespace
} // namespace gua::nvml

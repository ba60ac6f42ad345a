// SPDX-License-Identifier: Apache-2.0
// Slicing classified card-ticks into the cells of a history line: hand-worked cases (straddling
// ticks, ties, gaps, unmeasured time) and a property against a second-by-second painting.
#include "audit/slices.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <random>

namespace gua::audit {
namespace slices_test { // named after the file: unique in a unity batch

constexpr DurationUs k_s = k_us_per_second;
constexpr TimeUs k_t = 1778486400LL * k_us_per_second; // 2026-05-11T08:00:00Z

StateSpan span(TimeUs t0_s, DurationUs active_s, DurationUs held_s, DurationUs idle_s,
               DurationUs unmeasured_s) {
    const StateTimes t{active_s * k_s, held_s * k_s, idle_s * k_s, unmeasured_s * k_s};
    return StateSpan{k_t + t0_s * k_s, t.total(), t};
}

TEST(Slices, HandWorkedMinute) {
    // Six 10 s slices of [0, 60): ticks [0, 30) active, [30, 45) idle-held, [45, 50) unmeasured,
    // nothing in [50, 55), [55, 60) truly idle.
    const std::vector<StateSpan> spans{span(55, 0, 0, 5, 0), span(0, 30, 0, 0, 0),
                                       span(30, 0, 15, 0, 0), span(45, 0, 0, 0, 5)};
    const std::vector<StateSlice> s = slice_states(spans, k_t, k_t + 60 * k_s, 6);
    ASSERT_EQ(s.size(), 6U);
    for (std::size_t k = 0; k < 6; ++k) {
        EXPECT_EQ(s[k].start, k_t + static_cast<TimeUs>(k) * 10 * k_s);
        EXPECT_EQ(s[k].end, s[k].start + 10 * k_s);
    }
    EXPECT_EQ(s[0].state, SliceState::active);
    EXPECT_EQ(s[2].times.active, 10 * k_s);
    EXPECT_EQ(s[3].state, SliceState::idle_held);
    EXPECT_EQ(s[3].times.idle_held, 10 * k_s);
    // [40, 50): 5 s idle-held, 5 s unmeasured: a tie goes to the state named first.
    EXPECT_EQ(s[4].times.idle_held, 5 * k_s);
    EXPECT_EQ(s[4].times.unmeasured, 5 * k_s);
    EXPECT_EQ(s[4].state, SliceState::idle_held);
    // [50, 60): 5 s without a tick, 5 s truly idle.
    EXPECT_EQ(s[5].no_data_us, 5 * k_s);
    EXPECT_EQ(s[5].times.truly_idle, 5 * k_s);
    EXPECT_EQ(s[5].state, SliceState::truly_idle);
    EXPECT_EQ(s[0].no_data_us, 0);
}

TEST(Slices, ATickAcrossABoundarySpreadsItsTimesEvenly) {
    // One 6 s tick [8, 14) with 3 s active and 3 s idle-held: 2 s of it in [0, 10), 4 s in [10,
    // 20).
    const std::vector<StateSlice> s = slice_states({span(8, 3, 3, 0, 0)}, k_t, k_t + 20 * k_s, 2);
    ASSERT_EQ(s.size(), 2U);
    EXPECT_EQ(s[0].times.active, 1 * k_s);
    EXPECT_EQ(s[0].times.idle_held, 1 * k_s);
    EXPECT_EQ(s[0].no_data_us, 8 * k_s);
    EXPECT_EQ(s[0].state, SliceState::no_data) << "8 s of no data outweigh 2 s of card-time";
    EXPECT_EQ(s[1].times.active, 2 * k_s);
    EXPECT_EQ(s[1].times.idle_held, 2 * k_s);
    EXPECT_EQ(s[1].no_data_us, 6 * k_s);
    EXPECT_EQ(s[1].state, SliceState::no_data);
}

TEST(Slices, MostlyUnmeasuredShowsAsUnmeasuredNeverIdle) {
    // A 30 s tick whose ring was lost for 20 s and idle for 10 s.
    const std::vector<StateSlice> s = slice_states({span(0, 0, 0, 10, 20)}, k_t, k_t + 30 * k_s, 1);
    ASSERT_EQ(s.size(), 1U);
    EXPECT_EQ(s[0].state, SliceState::unmeasured);
}

TEST(Slices, UnevenBoundariesAndTicksOutsideTheWindow) {
    // [0, 10 s) in 3 slices: boundaries at 0, 3.333333 s, 6.666666 s (rounded down), 10 s.
    const std::vector<StateSlice> s = slice_states(
        {span(-5, 10, 0, 0, 0), span(5, 0, 0, 0, 0), span(12, 0, 9, 0, 0)}, k_t, k_t + 10 * k_s, 3);
    ASSERT_EQ(s.size(), 3U);
    EXPECT_EQ(s[1].start, k_t + 3333333);
    EXPECT_EQ(s[2].start, k_t + 6666666);
    EXPECT_EQ(s[2].end, k_t + 10 * k_s);
    // The tick [-5, 5) covers the first slice and 1.666667 s of the second; the empty tick at 5 s
    // has no duration and covers nothing; the tick at 12 s is after the window.
    EXPECT_EQ(s[0].times.active, 3333333);
    EXPECT_EQ(s[0].state, SliceState::active);
    EXPECT_EQ(s[1].times.active, 5 * k_s - 3333333);
    EXPECT_EQ(s[1].no_data_us, 6666666 - 5 * k_s);
    EXPECT_EQ(s[1].state, SliceState::active) << "1.666667 s active outweigh 1.666666 s of none";
    EXPECT_EQ(s[2].state, SliceState::no_data);
    EXPECT_EQ(s[2].times.idle_held, 0);
}

TEST(Slices, NothingToCut) {
    EXPECT_TRUE(slice_states({span(0, 10, 0, 0, 0)}, k_t, k_t + 10 * k_s, 0).empty());
    EXPECT_TRUE(slice_states({span(0, 10, 0, 0, 0)}, k_t, k_t, 4).empty());
    const std::vector<StateSlice> none = slice_states({}, k_t, k_t + 8 * k_s, 4);
    ASSERT_EQ(none.size(), 4U);
    for (const StateSlice& s : none) {
        EXPECT_EQ(s.state, SliceState::no_data);
        EXPECT_EQ(s.no_data_us, 2 * k_s);
    }
    EXPECT_EQ(to_string(SliceState::idle_held), "idle-held");
    EXPECT_EQ(to_string(SliceState::no_data), "no-data");
}

// Whole-second ticks of one state each, painted second by second into an independent raster: each
// slice's state is the one painted on most of its seconds (ties to the state named first).
RC_GTEST_PROP(Slices, AgreeWithASecondBySecondPainting, ()) {
    const int cells = *rc::gen::inRange(1, 25);
    const int cell_s = *rc::gen::inRange(1, 6);
    const int window_s = cells * cell_s;
    const int lead_s = *rc::gen::inRange(0, 8); // ticks may start before the window
    const auto segments = *rc::gen::container<std::vector<std::pair<int, int>>>(
        rc::gen::pair(rc::gen::inRange(1, 12), rc::gen::inRange(0, 5))); // (length, state 0..4)
    std::vector<int> painted(static_cast<std::size_t>(window_s), 4);     // 4: no data
    std::vector<StateSpan> spans;
    int at = -lead_s;
    for (const auto& [length, state] : segments) {
        if (state != 4) {
            StateTimes t;
            std::array<DurationUs*, 4> part{&t.active, &t.idle_held, &t.truly_idle, &t.unmeasured};
            *part[static_cast<std::size_t>(state)] = length * k_s;
            spans.push_back(StateSpan{k_t + at * k_s, length * k_s, t});
            for (int s = at; s < at + length; ++s) {
                if (s >= 0 && s < window_s) {
                    painted[static_cast<std::size_t>(s)] = state;
                }
            }
        }
        at += length;
    }
    std::shuffle(spans.begin(), spans.end(), std::mt19937(static_cast<unsigned>(spans.size())));
    const std::vector<StateSlice> slices = slice_states(spans, k_t, k_t + window_s * k_s, cells);
    RC_ASSERT(slices.size() == static_cast<std::size_t>(cells));
    for (int c = 0; c < cells; ++c) {
        std::array<int, 5> seconds{};
        for (int s = c * cell_s; s < (c + 1) * cell_s; ++s) {
            ++seconds[static_cast<std::size_t>(painted[static_cast<std::size_t>(s)])];
        }
        const auto expected = static_cast<SliceState>(
            std::max_element(seconds.begin(), seconds.end()) - seconds.begin());
        const StateSlice& got = slices[static_cast<std::size_t>(c)];
        RC_ASSERT(got.state == expected);
        RC_ASSERT(got.no_data_us == seconds[4] * k_s);
        RC_ASSERT(got.times.idle_held == seconds[1] * k_s);
    }
}

} // namespace slices_test
} // namespace gua::audit

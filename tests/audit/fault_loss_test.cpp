// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults: which Xids strand a card, the span a fault opens, the merge of
// spans, the pro-rata move out of idle-held, and the window totals with spans set.
#include "audit/fault_loss.hpp"
#include "audit/window.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gua::audit {
namespace fault_loss_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767571200LL * k_us_per_second; // 2026-01-05T00:00:00Z
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_dur = 10 * k_s;

TickState at(int n, bool stuck) { // the n-th 10 s tick from k_t0
    return TickState{k_t0 + n * k_dur, k_t0 + (n + 1) * k_dur, stuck};
}

TEST(FaultLoss, HardwareDriverAndInterconnectXidsStrandTheCard) {
    for (int xid : {79, 48, 94, 119, 120, 74, 145}) {
        EXPECT_TRUE(strands_card(xid)) << xid;
    }
    for (int xid : {13, 31, 43, 45, 999, 12345, -1}) {
        EXPECT_FALSE(strands_card(xid)) << xid;
    }
}

TEST(FaultLoss, SpanRunsFromTheFaultWhileTheCardStaysStuck) {
    // Ticks 0..5: active, active (fault at 15 s), stuck, stuck, active again, stuck.
    const std::vector<TickState> ticks{at(3, true), at(0, false), at(1, false),
                                       at(2, true), at(4, false), at(5, true)};
    EXPECT_EQ(fault_span(k_t0 + 15 * k_s, ticks), (FaultSpan{k_t0 + 15 * k_s, k_t0 + 40 * k_s}));
    // A fault in the last tick: to its end.
    EXPECT_EQ(fault_span(k_t0 + 52 * k_s, ticks), (FaultSpan{k_t0 + 52 * k_s, k_t0 + 60 * k_s}));
    // A fault in a tick followed by one without idle-held time: that tick alone.
    EXPECT_EQ(fault_span(k_t0 + 35 * k_s, ticks), (FaultSpan{k_t0 + 35 * k_s, k_t0 + 40 * k_s}));
}

TEST(FaultLoss, SpanStopsAtAGapAndIsEmptyWithoutTicks) {
    // Stuck ticks 0 and 1, then the recording stops for 5 minutes, then stuck again.
    const std::vector<TickState> ticks{at(0, true), at(1, true), at(32, true)};
    EXPECT_EQ(fault_span(k_t0 + 5 * k_s, ticks), (FaultSpan{k_t0 + 5 * k_s, k_t0 + 20 * k_s}));
    EXPECT_EQ(fault_span(k_t0 + 400 * k_s, ticks), (FaultSpan{k_t0 + 400 * k_s, k_t0 + 400 * k_s}));
    EXPECT_EQ(fault_span(k_t0, {}), (FaultSpan{k_t0, k_t0}));
    // A fault between ticks (no tick holds it) continues into a stuck tick that soon follows.
    const std::vector<TickState> later{at(1, true), at(2, false)};
    EXPECT_EQ(fault_span(k_t0 + 5 * k_s, later), (FaultSpan{k_t0 + 5 * k_s, k_t0 + 20 * k_s}));
}

TEST(FaultLoss, ASpanIsClosedOnlyWhenALaterTickEndedIt) {
    // What lets the report scan a few hours past a fault instead of the rest of the window.
    const std::vector<TickState> stuck{at(0, true), at(1, true), at(2, true)};
    const FaultSpanEnd open = fault_span_sorted(k_t0 + 5 * k_s, stuck);
    EXPECT_EQ(open.span, (FaultSpan{k_t0 + 5 * k_s, k_t0 + 30 * k_s}));
    EXPECT_FALSE(open.closed) << "ticks after 30 s may still extend it";
    const std::vector<TickState> busy_again{at(0, true), at(1, true), at(2, false)};
    EXPECT_TRUE(fault_span_sorted(k_t0 + 5 * k_s, busy_again).closed);
    const std::vector<TickState> gap{at(0, true), at(40, true)};
    const FaultSpanEnd after_gap = fault_span_sorted(k_t0 + 5 * k_s, gap);
    EXPECT_TRUE(after_gap.closed) << "a tick after a gap longer than a minute ends it";
    EXPECT_EQ(after_gap.span.to, k_t0 + 10 * k_s);
    EXPECT_FALSE(fault_span_sorted(k_t0, {}).closed);
}

TEST(FaultLoss, SpansOfOneCardMergeAndCountOnce) {
    FaultSpans spans;
    spans.add(0, k_t0 + 10 * k_s, k_t0 + 30 * k_s);
    spans.add(0, k_t0 + 20 * k_s, k_t0 + 40 * k_s); // the same fault from a second source
    spans.add(0, k_t0 + 60 * k_s, k_t0 + 70 * k_s);
    spans.add(1, k_t0, k_t0); // empty: ignored
    ASSERT_EQ(spans.spans().size(), 1U);
    EXPECT_EQ(spans.spans().at(0), (std::vector<FaultSpan>{{k_t0 + 10 * k_s, k_t0 + 40 * k_s},
                                                           {k_t0 + 60 * k_s, k_t0 + 70 * k_s}}));
    EXPECT_EQ(spans.overlap(0, k_t0, k_t0 + 100 * k_s), 40 * k_s);
    EXPECT_EQ(spans.overlap(0, k_t0 + 35 * k_s, k_t0 + 65 * k_s), 10 * k_s);
    EXPECT_EQ(spans.overlap(1, k_t0, k_t0 + 100 * k_s), 0);
    EXPECT_TRUE(spans.any_in(k_t0 + 65 * k_s, k_t0 + 66 * k_s));
    EXPECT_FALSE(spans.any_in(k_t0 + 40 * k_s, k_t0 + 60 * k_s));
}

TEST(FaultLoss, TakesTheLostShareOfIdleHeldOnly) {
    StateTimes s{2 * k_s, 8 * k_s, 0, 0, 0};
    take_lost_to_faults(s, 5 * k_s, k_dur); // half the tick: half its idle-held time
    EXPECT_EQ(s.idle_held, 4 * k_s);
    EXPECT_EQ(s.lost_to_faults, 4 * k_s);
    EXPECT_EQ(s.active, 2 * k_s);
    EXPECT_EQ(s.total(), k_dur);
    StateTimes idle{0, 0, k_dur, 0, 0};
    take_lost_to_faults(idle, k_dur, k_dur); // nothing held: nothing lost
    EXPECT_EQ(idle.lost_to_faults, 0);
    EXPECT_EQ(idle.truly_idle, k_dur);
}

CardTick held_idle(std::uint32_t gpu, int n, std::uint32_t identity) {
    CardTick t;
    t.gpu = gpu;
    t.t0 = k_t0 + n * k_dur;
    t.duration_us = k_dur;
    t.active_us = 0;
    t.bucket_us = {k_dur, 0, 0, 0};
    t.processes = {
        ProcTick{identity, telemetry::ProcessType::compute, 8000, 0.0, std::nullopt, std::nullopt}};
    return t;
}

TEST(FaultLoss, WindowLeavesLostTimeOutOfIdleHeldAndIdentities) {
    WindowAccumulator acc(Thresholds{}, 0, [](TimeUs) { return std::pair{1, 10}; });
    FaultSpans spans;
    spans.add(0, k_t0 + 25 * k_s, k_t0 + 60 * k_s); // card 0 from 25 s on; card 1 none
    acc.set_fault_spans(spans);
    for (int n = 0; n < 6; ++n) { // 60 s of each card held idle, identity 1 on 0, 2 on 1
        acc.add(held_idle(0, n, 1));
        acc.add(held_idle(1, n, 2));
    }
    const StateTimes& card0 = acc.gpus()[0].states;
    EXPECT_EQ(card0.lost_to_faults, 35 * k_s);
    EXPECT_EQ(card0.idle_held, 25 * k_s);
    EXPECT_EQ(card0.total(), 60 * k_s) << "the states still add up to the recorded time";
    EXPECT_EQ(acc.gpus()[1].states.idle_held, 60 * k_s);
    EXPECT_EQ(acc.gpus()[1].states.lost_to_faults, 0);
    EXPECT_EQ(acc.identities()[1].idle_held_us, 25 * k_s) << "not billed for the lost time";
    EXPECT_EQ(acc.identities()[2].idle_held_us, 60 * k_s);
    EXPECT_EQ(acc.states().lost_to_faults, 35 * k_s);
    EXPECT_EQ(acc.states().idle_held, 85 * k_s);
}

} // namespace fault_loss_test
} // namespace gua::audit

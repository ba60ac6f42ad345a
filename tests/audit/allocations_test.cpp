// SPDX-License-Identifier: Apache-2.0
// Allocation arithmetic: a tick's matrix cells, exact splits between allocations sharing a card,
// unknown allocations kept out of "use outside the scheduler", rescaling, the dominant state and
// the 20 % rule on blocked time.
#include "audit/allocations.hpp"
#include "audit/from_tick.hpp"
#include "audit/rescale.hpp"
#include "audit/waste.hpp"
#include "audit/window.hpp"

#include <gtest/gtest.h>

namespace gua::audit::allocations_test {

constexpr DurationUs k_s = 1'000'000;

/// A 30 s tick: active 10 s, idle and not held 20 s; an allocation owned the card the whole tick.
CardTick allocated_tick() {
    CardTick t;
    t.duration_us = 30 * k_s;
    t.active_us = 10 * k_s;
    t.idle_unlisted_us = 20 * k_s;
    t.allocation.allocated_us = 30 * k_s;
    t.allocation.active_us = 10 * k_s;
    t.allocation.unused_us = 20 * k_s;
    return t;
}

TEST(Allocations, TickCellsFollowTheClassification) {
    const CardTick t = allocated_tick();
    const TickAllocation a = tick_allocation(t, classify(t, Thresholds{}));
    EXPECT_EQ(a.matrix.allocated_active, 10 * k_s);
    EXPECT_EQ(a.matrix.allocated_unused, 20 * k_s);
    EXPECT_EQ(a.matrix.unallocated_active, 0);
    EXPECT_EQ(a.matrix.unallocated_truly_idle, 0);
    EXPECT_EQ(a.unallocated_active_share, 0.0);
}

TEST(Allocations, UnknownAllocationIsNeverUseOutsideTheScheduler) {
    CardTick t = allocated_tick();
    t.allocation = telemetry::AllocationTimes{};
    t.allocation.unknown_us = 30 * k_s; // the source failed: 10 s active, 20 s idle unknown
    t.allocation.unknown_idle_us = 20 * k_s;
    const StateTimes s = classify(t, Thresholds{});
    const TickAllocation a = tick_allocation(t, s);
    EXPECT_EQ(s.unmeasured, 20 * k_s);
    EXPECT_EQ(a.matrix.unknown, 30 * k_s);
    EXPECT_EQ(a.matrix.unknown_use, 10 * k_s);
    EXPECT_EQ(a.matrix.unallocated_active, 0);
    EXPECT_EQ(a.unallocated_active_share, 0.0);
}

TEST(Allocations, SharesSplitExactlyByOverlap) {
    // Two allocations on one card: 7 s and 23 s of a tick whose idle time is 20 s; 20 × 7 / 30
    // is not whole, and the parts must still add up.
    CardTick t = allocated_tick();
    t.gpu = 3;
    t.allocations = {{0, 7 * k_s}, {2, 23 * k_s}};
    const TickAllocation a = tick_allocation(t, classify(t, Thresholds{}));
    std::vector<AllocationTotals> totals;
    add_allocation_shares(t, a.matrix, totals);
    ASSERT_EQ(totals.size(), 3u);
    EXPECT_TRUE(totals[1].by_gpu.empty());
    EXPECT_EQ(totals[0].by_gpu.at(0).gpu, 3u);
    EXPECT_EQ(totals[0].unused_us() + totals[2].unused_us(), 20 * k_s);
    EXPECT_EQ(totals[0].active_us() + totals[2].active_us(), 10 * k_s);
    EXPECT_EQ(totals[0].allocated_us() + totals[2].allocated_us(), 30 * k_s);
    // ⌊20 s × 7/30⌋ = 4.666… s → 4666666 µs; the other gets the rest.
    EXPECT_EQ(totals[0].unused_us(), 4'666'666);
    EXPECT_EQ(totals[2].unused_us(), 20 * k_s - 4'666'666);
}

TEST(Allocations, RescaleShrinksTheAllocationTimes) {
    CardTick t = allocated_tick();
    t.allocations = {{0, 30 * k_s}};
    rescale(t, 15 * k_s);
    EXPECT_EQ(t.allocation.allocated_us, 15 * k_s);
    EXPECT_EQ(t.allocation.unused_us, 10 * k_s);
    EXPECT_EQ(t.allocations[0].overlap_us, 15 * k_s);
}

TEST(Allocations, DominantStateNamesAllocatedUnused) {
    EXPECT_STREQ(dominant_state(allocated_tick(), Thresholds{}), "allocated-unused");
    CardTick unallocated = allocated_tick();
    unallocated.allocation = telemetry::AllocationTimes{};
    EXPECT_STREQ(dominant_state(unallocated, Thresholds{}), "truly-idle");
}

TEST(Allocations, TheRuleJudgesBlockedTime) {
    // 100 s: 70 active, 15 idle-held, 15 allocated-unused. Idle-held alone is 15 % (within),
    // blocked is 30 % (above).
    StateTimes s;
    s.active = 70 * k_s;
    s.idle_held = 15 * k_s;
    s.allocated_unused = 15 * k_s;
    const Waste w = compute_waste({s}, 0);
    EXPECT_NEAR(w.idle_held_share, 0.15, 1e-12);
    EXPECT_NEAR(w.allocated_unused_share, 0.15, 1e-12);
    EXPECT_NEAR(w.blocked_share, 0.30, 1e-12);
    EXPECT_TRUE(w.policy_problem);
    EXPECT_TRUE(w.verdict_certain);
    EXPECT_NEAR(w.allocated_unused_gpu_hours, 15.0 / 3600.0, 1e-12);
}

TEST(Allocations, WindowKeepsUseOutsideTheSchedulerPerIdentity) {
    // Card 0 active 30 s for identity 1, half of it under an allocation.
    CardTick t;
    t.duration_us = 30 * k_s;
    t.active_us = 30 * k_s;
    t.bucket_us[3] = 30 * k_s;
    t.processes.push_back(
        ProcTick{1, telemetry::ProcessType::compute, 1000, 100.0, 30 * k_s, DurationUs{0}});
    t.allocation.allocated_us = 15 * k_s;
    t.allocation.active_us = 15 * k_s;
    t.allocations = {{0, 15 * k_s}};
    WindowAccumulator acc(Thresholds{}, 0, [](TimeUs) { return std::pair{1, 10}; });
    acc.add(t);
    EXPECT_EQ(acc.identities().at(1).unallocated_active_us, 15 * k_s);
    EXPECT_EQ(acc.gpus().at(0).allocation.unallocated_active, 15 * k_s);
    EXPECT_EQ(acc.allocations().at(0).active_us(), 15 * k_s);
}

} // namespace gua::audit::allocations_test

// SPDX-License-Identifier: Apache-2.0
// classify() with allocation times: idle time not held splits into allocated-unused, unmeasured
// (allocation unknown) and truly idle; active and idle-held are untouched.
#include "audit/classify.hpp"

#include <gtest/gtest.h>

namespace gua::audit::classify_allocation_test {

constexpr DurationUs k_s = 1'000'000;

CardTick cold_card() {
    CardTick t;
    t.duration_us = 30 * k_s;
    t.active_us = 6 * k_s;
    t.idle_unlisted_us = 24 * k_s; // idle and not held for the rest
    return t;
}

TEST(ClassifyAllocation, WithoutAllocationTheSplitIsUnchanged) {
    const StateTimes t = classify(cold_card(), Thresholds{});
    EXPECT_EQ(t.active, 6 * k_s);
    EXPECT_EQ(t.truly_idle, 24 * k_s);
    EXPECT_EQ(t.allocated_unused, 0);
    EXPECT_EQ(t.total(), 30 * k_s);
}

TEST(ClassifyAllocation, AllocatedIdleIsAllocatedUnusedAndUnknownIsUnmeasured) {
    CardTick c = cold_card();
    c.allocation.allocated_us = 20 * k_s;
    c.allocation.active_us = 6 * k_s;
    c.allocation.unused_us = 14 * k_s;
    c.allocation.unknown_us = 4 * k_s;
    c.allocation.unknown_idle_us = 4 * k_s;
    const StateTimes t = classify(c, Thresholds{});
    EXPECT_EQ(t.active, 6 * k_s);
    EXPECT_EQ(t.allocated_unused, 14 * k_s);
    EXPECT_EQ(t.unmeasured, 4 * k_s);
    EXPECT_EQ(t.truly_idle, 6 * k_s); // 24 − 14 − 4
    EXPECT_EQ(t.total(), 30 * k_s);
}

TEST(ClassifyAllocation, InconsistentAllocationTimesNeverBreakTheTotal) {
    CardTick c = cold_card();
    c.allocation.unused_us = 100 * k_s; // more than the idle time: clamped
    const StateTimes t = classify(c, Thresholds{});
    EXPECT_EQ(t.allocated_unused, 24 * k_s);
    EXPECT_EQ(t.truly_idle, 0);
    EXPECT_EQ(t.total(), 30 * k_s);
}

} // namespace gua::audit::classify_allocation_test

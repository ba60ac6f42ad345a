// SPDX-License-Identifier: Apache-2.0
// Allocations crossed with the card's state over a window: the allocation matrix, each
// allocation's time per card, and the part of a card-tick's use that no allocation covered.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"

#include <cstdint>
#include <vector>

namespace gua::audit {

/// Card time by allocation × state (docs/allocations.md). Allocated: an allocation owned the
/// card; unallocated: none did (or no allocation source was configured); unknown: a configured
/// source could not say. A card-tick whose allocation was partly unknown puts its unallocated
/// active and idle-held time under unknown_use (never "use outside the scheduler" by guess).
struct AllocationMatrix {
    DurationUs allocated_active = 0;
    DurationUs allocated_idle_held = 0;
    DurationUs allocated_unused = 0;
    DurationUs unallocated_active = 0;
    DurationUs unallocated_idle_held = 0;
    DurationUs unallocated_truly_idle = 0;
    DurationUs unknown = 0;     ///< time the allocation was unknown (AllocationTimes::unknown_us)
    DurationUs unknown_use = 0; ///< active + idle-held time not allocated in those card-ticks

    /// True when an allocation owned a card or a source failed at some point.
    bool any() const {
        return allocated_active + allocated_idle_held + allocated_unused + unknown > 0;
    }
    AllocationMatrix& operator+=(const AllocationMatrix& o);
    friend bool operator==(const AllocationMatrix&, const AllocationMatrix&) = default;
};

/// One allocation's time on one card (`gpu` as in CardTick::gpu).
struct AllocationGpuTime {
    std::uint32_t gpu = 0;
    DurationUs allocated_us = 0; ///< its share of the card's allocated time
    DurationUs active_us = 0;
    DurationUs idle_held_us = 0;
    DurationUs unused_us = 0; ///< allocated-unused
};

/// One allocation's time over the window (indexes the caller's AllocationRow table).
struct AllocationTotals {
    std::vector<AllocationGpuTime> by_gpu; ///< in the order its cards first appeared

    DurationUs allocated_us() const;
    DurationUs active_us() const;
    DurationUs idle_held_us() const;
    DurationUs unused_us() const;
    AllocationTotals& operator+=(const AllocationTotals& o);
};

/// What a card-tick's allocation adds: its matrix cells, and the share of the tick's attributed
/// (active, idle-held) time that no allocation covered, to scale each identity's share by.
struct TickAllocation {
    AllocationMatrix matrix;
    double unallocated_active_share = 0;    ///< of states.active; 0 when states.active is 0
    double unallocated_idle_held_share = 0; ///< of states.idle_held
};

/// Crosses `tick`'s allocation with its classification `states` (classify(tick)). Allocated
/// active and idle-held times are clamped to the tick's; allocated-unused is states'.
TickAllocation tick_allocation(const CardTick& tick, const StateTimes& states);

/// Adds the tick's allocated time to each allocation that owned the card, split by their
/// overlaps (exact integers: the parts add up to the tick's). Shares naming an allocation
/// beyond `totals` grow it.
void add_allocation_shares(const CardTick& tick, const AllocationMatrix& cells,
                           std::vector<AllocationTotals>& totals);

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Card-tick classification: how a card's time splits into active, idle-held and truly idle.
#pragma once

#include "audit/card_tick.hpp"

#include <cstdint>

namespace gua::audit {

/// Time of one or more card-ticks by state, in microseconds. `unmeasured` is time whose
/// utilization was not available ("n/a", never counted as idle).
struct StateTimes {
    DurationUs active = 0;
    DurationUs idle_held = 0;
    DurationUs truly_idle = 0;
    DurationUs unmeasured = 0;
    /// Allocated-unused: an allocation (Slurm job, pod) owned the card, its SMs were cold and it
    /// was not held (docs/allocations.md). Zero without an allocation source; truly_idle is then
    /// unallocated and unused.
    DurationUs allocated_unused = 0;
    /// Lost to faults: idle-held time after a hardware, driver or interconnect fault on the card
    /// (docs/faults.md), moved out of idle_held at report time. Zero without such faults.
    DurationUs lost_to_faults = 0;

    DurationUs total() const {
        return active + idle_held + truly_idle + unmeasured + allocated_unused + lost_to_faults;
    }
    StateTimes& operator+=(const StateTimes& o);
};

/// True when `p` counts as holding the card: a compute or MPS context (or graphics when so
/// configured).
bool is_holder(const ProcTick& p, const Thresholds& thresholds);

/// True when the card's holders together hold more than the threshold, or a holder's memory is
/// unknown (a live context always holds memory; missing is not zero).
bool is_held(const CardTick& tick, const Thresholds& thresholds);

/// Splits the tick's duration: active = time at or above the active threshold; unmeasured = time
/// whose utilization is unknown plus idle time whose holders are unknown (the whole tick without
/// utilization); idle time not held (idle_unlisted_us) is truly idle; the rest is idle-held when
/// the recording decided it poll by poll (a process carries idle_held_us) or the card is held
/// (is_held, older recordings), else truly idle. Of the idle time not held, the part an
/// allocation owned is allocated-unused and the part whose allocation was unknown is unmeasured
/// (tick.allocation). The five parts add up to the duration.
StateTimes classify(const CardTick& tick, const Thresholds& thresholds);

} // namespace gua::audit

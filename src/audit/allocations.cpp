// SPDX-License-Identifier: Apache-2.0
// Allocation × state arithmetic (docs/allocations.md).
#include "audit/allocations.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

namespace {

/// Part `i` of `total` split by `weights` (Σ weights = `sum` > 0) with cumulative rounding, so
/// that the parts add up to `total` exactly.
DurationUs part_of(DurationUs total, DurationUs cumulative_before, DurationUs weight,
                   DurationUs sum) {
    const auto at = [&](DurationUs c) {
        // One card-tick's microseconds: the product stays far inside long double's 64-bit
        // mantissa, so the division is exact where the parts must add up.
        return static_cast<DurationUs>(
            std::floor(static_cast<long double>(total) * static_cast<long double>(c) /
                       static_cast<long double>(sum)));
    };
    return at(cumulative_before + weight) - at(cumulative_before);
}

} // namespace

AllocationMatrix& AllocationMatrix::operator+=(const AllocationMatrix& o) {
    allocated_active += o.allocated_active;
    allocated_idle_held += o.allocated_idle_held;
    allocated_unused += o.allocated_unused;
    unallocated_active += o.unallocated_active;
    unallocated_idle_held += o.unallocated_idle_held;
    unallocated_truly_idle += o.unallocated_truly_idle;
    unknown += o.unknown;
    unknown_use += o.unknown_use;
    return *this;
}

DurationUs AllocationTotals::allocated_us() const {
    DurationUs t = 0;
    for (const AllocationGpuTime& g : by_gpu) {
        t += g.allocated_us;
    }
    return t;
}

DurationUs AllocationTotals::active_us() const {
    DurationUs t = 0;
    for (const AllocationGpuTime& g : by_gpu) {
        t += g.active_us;
    }
    return t;
}

DurationUs AllocationTotals::idle_held_us() const {
    DurationUs t = 0;
    for (const AllocationGpuTime& g : by_gpu) {
        t += g.idle_held_us;
    }
    return t;
}

DurationUs AllocationTotals::unused_us() const {
    DurationUs t = 0;
    for (const AllocationGpuTime& g : by_gpu) {
        t += g.unused_us;
    }
    return t;
}

AllocationTotals& AllocationTotals::operator+=(const AllocationTotals& o) {
    for (const AllocationGpuTime& g : o.by_gpu) {
        auto on = std::find_if(by_gpu.begin(), by_gpu.end(),
                               [&](const AllocationGpuTime& x) { return x.gpu == g.gpu; });
        if (on == by_gpu.end()) {
            on = by_gpu.insert(by_gpu.end(), AllocationGpuTime{g.gpu});
        }
        on->allocated_us += g.allocated_us;
        on->active_us += g.active_us;
        on->idle_held_us += g.idle_held_us;
        on->unused_us += g.unused_us;
    }
    return *this;
}

TickAllocation tick_allocation(const CardTick& tick, const StateTimes& states) {
    const telemetry::AllocationTimes& a = tick.allocation;
    TickAllocation out;
    AllocationMatrix& m = out.matrix;
    m.allocated_active = std::clamp<DurationUs>(a.active_us, 0, states.active);
    m.allocated_idle_held = std::clamp<DurationUs>(a.idle_held_us, 0, states.idle_held);
    m.allocated_unused = states.allocated_unused;
    m.unallocated_truly_idle = states.truly_idle; // classify() left only unallocated idle there
    m.unknown = std::max<DurationUs>(a.unknown_us, 0);
    const DurationUs active_left = states.active - m.allocated_active;
    const DurationUs held_left = states.idle_held - m.allocated_idle_held;
    if (m.unknown > 0) {
        m.unknown_use = active_left + held_left;
        return out;
    }
    m.unallocated_active = active_left;
    m.unallocated_idle_held = held_left;
    if (states.active > 0) {
        out.unallocated_active_share =
            static_cast<double>(active_left) / static_cast<double>(states.active);
    }
    if (states.idle_held > 0) {
        out.unallocated_idle_held_share =
            static_cast<double>(held_left) / static_cast<double>(states.idle_held);
    }
    return out;
}

void add_allocation_shares(const CardTick& tick, const AllocationMatrix& cells,
                           std::vector<AllocationTotals>& totals) {
    DurationUs sum = 0;
    for (const AllocationShare& s : tick.allocations) {
        sum += std::max<DurationUs>(s.overlap_us, 0);
    }
    if (sum <= 0) {
        return;
    }
    const DurationUs allocated = std::max<DurationUs>(tick.allocation.allocated_us, 0);
    DurationUs before = 0;
    for (const AllocationShare& s : tick.allocations) {
        const DurationUs w = std::max<DurationUs>(s.overlap_us, 0);
        if (totals.size() <= s.allocation) {
            totals.resize(s.allocation + 1);
        }
        std::vector<AllocationGpuTime>& by_gpu = totals[s.allocation].by_gpu;
        auto on = std::find_if(by_gpu.begin(), by_gpu.end(),
                               [&](const AllocationGpuTime& x) { return x.gpu == tick.gpu; });
        if (on == by_gpu.end()) {
            on = by_gpu.insert(by_gpu.end(), AllocationGpuTime{tick.gpu});
        }
        on->allocated_us += part_of(allocated, before, w, sum);
        on->active_us += part_of(cells.allocated_active, before, w, sum);
        on->idle_held_us += part_of(cells.allocated_idle_held, before, w, sum);
        on->unused_us += part_of(cells.allocated_unused, before, w, sum);
        before += w;
    }
}

} // namespace gua::audit

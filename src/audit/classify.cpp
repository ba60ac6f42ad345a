// SPDX-License-Identifier: Apache-2.0
// Card-tick classification (DESIGN.md "Measurement rules").
#include "audit/classify.hpp"

#include <algorithm>

namespace gua::audit {

Bucket bucket_of(double util_pct) {
    if (util_pct >= k_bucket_floor_pct[3]) {
        return Bucket::compute_bound;
    }
    if (util_pct >= k_bucket_floor_pct[2]) {
        return Bucket::productive;
    }
    if (util_pct >= k_bucket_floor_pct[1]) {
        return Bucket::underutilized;
    }
    return Bucket::idle;
}

StateTimes& StateTimes::operator+=(const StateTimes& o) {
    active += o.active;
    idle_held += o.idle_held;
    truly_idle += o.truly_idle;
    unmeasured += o.unmeasured;
    allocated_unused += o.allocated_unused;
    lost_to_faults += o.lost_to_faults;
    return *this;
}

bool is_holder(const ProcTick& p, const Thresholds& thresholds) {
    return p.type != telemetry::ProcessType::graphics || thresholds.graphics_is_holder;
}

bool is_held(const CardTick& tick, const Thresholds& thresholds) {
    std::int64_t held = 0;
    for (const ProcTick& p : tick.processes) {
        if (!is_holder(p, thresholds)) {
            continue;
        }
        if (!p.mem_used_mib) {
            return true;
        }
        held += *p.mem_used_mib;
    }
    return held > thresholds.held_mib;
}

StateTimes classify(const CardTick& tick, const Thresholds& thresholds) {
    StateTimes t;
    if (!tick.active_us) {
        t.unmeasured = tick.duration_us;
        return t;
    }
    // Each part is clamped to what the earlier ones left, so the four always add up to the
    // duration even when a recording's fields disagree by a rounding microsecond.
    DurationUs left = std::max<DurationUs>(tick.duration_us, 0);
    const auto take = [&left](DurationUs want) {
        const DurationUs got = std::clamp<DurationUs>(want, 0, left);
        left -= got;
        return got;
    };
    t.active = take(*tick.active_us);
    t.unmeasured = take(tick.unmeasured_us + tick.idle_unknown_us);
    t.truly_idle = take(tick.idle_unlisted_us);
    // A recording that decided held or not poll by poll says so with per-process idle-held
    // times: what is left is then idle-held. Older recordings are judged by the tick's memory.
    const bool decided = std::any_of(tick.processes.begin(), tick.processes.end(),
                                     [](const ProcTick& p) { return p.idle_held_us.has_value(); });
    if (decided || is_held(tick, thresholds)) {
        t.idle_held = left;
    } else {
        t.truly_idle += left;
    }
    // Idle time not held splits by allocation: allocated → allocated-unused; allocation unknown
    // → unmeasured (never a confident "truly idle"); the rest is unallocated: truly idle.
    const DurationUs unknown = std::min(tick.allocation.unknown_idle_us, t.truly_idle);
    t.truly_idle -= unknown;
    t.unmeasured += unknown;
    t.allocated_unused = std::min(tick.allocation.unused_us, t.truly_idle);
    t.truly_idle -= t.allocated_unused;
    return t;
}

} // namespace gua::audit

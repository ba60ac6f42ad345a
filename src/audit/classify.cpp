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
    t.active = std::clamp<DurationUs>(*tick.active_us, 0, tick.duration_us);
    const DurationUs rest = tick.duration_us - t.active;
    if (is_held(tick, thresholds)) {
        t.idle_held = rest;
    } else {
        t.truly_idle = rest;
    }
    return t;
}

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Live classification helpers for freshly sampled ticks.
#include "audit/from_tick.hpp"

#include "audit/classify.hpp"

#include <algorithm>

namespace gua::audit {

CardTick to_card_tick(const telemetry::Tick& tick, const telemetry::CardTickRecord& card) {
    CardTick c;
    c.t0 = tick.t0;
    c.duration_us = tick.duration_us;
    c.active_us = card.active_us;
    c.bucket_us = card.bucket_us;
    c.util_pct = card.util_pct;
    c.util_source = card.util_source;
    c.unmeasured_us = card.unmeasured_us;
    c.idle_unlisted_us = card.idle_unlisted_us;
    c.idle_unknown_us = card.idle_unknown_us;
    c.readings = card.readings;
    c.allocation = card.allocation;
    for (const telemetry::ProcessTick& p : card.processes) {
        c.processes.push_back(
            ProcTick{0, p.type, p.mem_used_mib, p.sm_util_pct, p.active_us, p.idle_held_us});
    }
    return c;
}

const char* dominant_state(const CardTick& card, const Thresholds& thresholds) {
    const StateTimes t = classify(card, thresholds);
    // A card-tick mostly unmeasured (or wholly: MIG) has no state to show.
    if (t.unmeasured > 0 &&
        t.unmeasured >= std::max({t.active, t.idle_held, t.truly_idle, t.allocated_unused})) {
        return "n/a";
    }
    if (t.active >= t.idle_held && t.active >= t.truly_idle && t.active >= t.allocated_unused) {
        return "active";
    }
    if (t.idle_held >= t.truly_idle && t.idle_held >= t.allocated_unused) {
        return "idle-held";
    }
    return t.allocated_unused > t.truly_idle ? "allocated-unused" : "truly-idle";
}

} // namespace gua::audit

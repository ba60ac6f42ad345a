// SPDX-License-Identifier: Apache-2.0
// Proportional rescaling of a card-tick's times.
#include "audit/rescale.hpp"

#include "telemetry/card_fields.hpp"

#include <cmath>

namespace gua::audit {

void rescale(CardTick& tick, DurationUs duration_us) {
    if (tick.duration_us <= 0) {
        return;
    }
    const double scale = static_cast<double>(duration_us) / static_cast<double>(tick.duration_us);
    const auto scaled = [scale](DurationUs us) {
        return static_cast<DurationUs>(std::llround(static_cast<double>(us) * scale));
    };
    if (tick.active_us) {
        tick.active_us = scaled(*tick.active_us);
    }
    for (DurationUs& b : tick.bucket_us) {
        b = scaled(b);
    }
    tick.unmeasured_us = scaled(tick.unmeasured_us);
    tick.idle_unlisted_us = scaled(tick.idle_unlisted_us);
    tick.idle_unknown_us = scaled(tick.idle_unknown_us);
    for (ProcTick& p : tick.processes) {
        if (p.active_us) {
            p.active_us = scaled(*p.active_us);
        }
        if (p.idle_held_us) {
            p.idle_held_us = scaled(*p.idle_held_us);
        }
    }
    telemetry::AllocationTimes& a = tick.allocation;
    for (DurationUs* us : {&a.allocated_us, &a.active_us, &a.idle_held_us, &a.unused_us,
                           &a.unknown_us, &a.unknown_idle_us}) {
        *us = scaled(*us);
    }
    for (AllocationShare& s : tick.allocations) {
        s.overlap_us = scaled(s.overlap_us);
    }
    // Readings that sum over the tick (energy, clocks-event time) shrink with it.
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        std::optional<std::int64_t>& v = tick.readings.*f.value;
        if (v && (f.fold == telemetry::Fold::counter || f.fold == telemetry::Fold::event_time)) {
            v = scaled(*v);
        }
    }
    tick.duration_us = duration_us;
}

} // namespace gua::audit

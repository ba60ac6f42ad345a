// SPDX-License-Identifier: Apache-2.0
// Rescaling a card-tick to another duration, keeping the proportions of its parts (used for the
// --interval override of gpu-usage-audit and to drop the part of a tick that another run already
// recorded).
#pragma once

#include "audit/card_tick.hpp"

namespace gua::audit {

/// Scales every time of `tick` (active, buckets, unmeasured and idle parts, per-process active
/// time, and the readings that sum over the tick: energy, clocks-event time) by
/// duration_us / tick.duration_us and sets its duration; t0 is left alone. A tick of duration ≤ 0
/// is left unchanged.
void rescale(CardTick& tick, DurationUs duration_us);

} // namespace gua::audit

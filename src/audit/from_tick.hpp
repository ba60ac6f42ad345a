// SPDX-License-Identifier: Apache-2.0
// Conversion of a freshly sampled card-tick record into the audit's CardTick (live classification).
#pragma once

#include "audit/card_tick.hpp"
#include "telemetry/tick.hpp"

namespace gua::audit {

/// Builds the audit view of `card` within `tick`; every process gets identity index 0.
CardTick to_card_tick(const telemetry::Tick& tick, const telemetry::CardTickRecord& card);

/// "active", "idle-held", "allocated-unused", "truly-idle" (the state holding most of the time)
/// or "n/a"; ties go to the state listed first.
const char* dominant_state(const CardTick& card, const Thresholds& thresholds);

} // namespace gua::audit

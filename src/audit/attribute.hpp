// SPDX-License-Identifier: Apache-2.0
// Attribution of a card-tick's time to identities, without double counting.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"

#include <cstdint>
#include <vector>

namespace gua::audit {

/// One identity's share of a card-tick in whole microseconds. Integer shares make sums exact and
/// independent of order, so hourly rollups add up to exactly what the raw card-ticks give.
struct IdentityShareUs {
    std::uint32_t identity = 0;
    DurationUs active_us = 0;          ///< share of the card's active time
    DurationUs idle_held_us = 0;       ///< share of the card's idle-held time
    std::int64_t idle_held_mib_us = 0; ///< memory held while its own SMs were idle × time (MiB·µs)
};

/// The same share as doubles (whole-microsecond values), for callers that sum in floating point.
struct IdentityShare {
    std::uint32_t identity = 0;
    double active_us = 0;        ///< share of the card's active time
    double idle_held_us = 0;     ///< share of the card's idle-held time
    double idle_held_mib_us = 0; ///< memory held while its own SMs were idle × time (MiB·µs)
};

/// Splits `states` (the classification of `tick`) among the tick's identities: active time first
/// by each process's own recorded active_us (capped at what is left), the rest by per-process SM
/// utilization share (0.01 % resolution; by held memory when no process reports SM
/// activity), idle-held time first by each process's recorded idle_held_us (capped at what is
/// left), the rest by held memory. Each split is exact in whole microseconds (largest
/// remainder, ties to the earlier process), so the shares of a tick add up to active + idle_held.
/// Shares of one identity's processes are merged. Active time with no process to carry it goes to
/// `nobody`. Clears `out` first so the caller can reuse the vector.
void attribute_us(const CardTick& tick, const StateTimes& states, const Thresholds& thresholds,
                  std::uint32_t nobody, std::vector<IdentityShareUs>& out);

/// attribute_us() with the shares converted to doubles. Clears `out` first.
void attribute(const CardTick& tick, const StateTimes& states, const Thresholds& thresholds,
               std::uint32_t nobody, std::vector<IdentityShare>& out);

/// An identity with at least one process on a card-tick; `holder` when one of them holds the card.
struct Presence {
    std::uint32_t identity = 0;
    bool holder = false;
};

/// The distinct identities with a process on `tick` (measured or not: MIG counts), in order of
/// first appearance. Appends to `out` (cleared first).
void presence(const CardTick& tick, const Thresholds& thresholds, std::vector<Presence>& out);

} // namespace gua::audit

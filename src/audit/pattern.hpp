// SPDX-License-Identifier: Apache-2.0
// Sub-interval utilization pattern of a card-tick: steady, or bursty (bursts of ≥ 90 % between
// stretches of < 10 %: the signature of a data-loader-starved trainer).
#pragma once

#include "audit/card_tick.hpp"

#include <cstdint>

namespace gua::audit {

/// How a card-tick's utilization was spread over its sub-samples.
enum class Pattern : std::uint8_t {
    unmeasured = 0, ///< no utilization reading
    inactive = 1,   ///< no time at or above the active threshold
    steady = 2,     ///< active, utilization concentrated (not bimodal)
    bursty = 3,     ///< active, bimodal: mostly at the extremes, with both extremes present
};

/// A tick is bursty when the extreme buckets (idle < 10 % and compute-bound ≥ 90 %) hold at
/// least this share of its measured time: a steady kernel stream at any level puts most of its
/// time in one bucket, and a 2:1 mix of two middle levels never gets here.
inline constexpr double k_bursty_extremes_share = 0.80;
/// …and each extreme holds at least this share, so a tick that merely starts or ends a run is not
/// bursty. Both sides present implies at least two sub-samples.
inline constexpr double k_bursty_side_share = 0.15;

/// Classifies a card-tick from its stored efficiency-bucket times alone, so old data can be
/// re-analysed: `idle_us`, `compute_bound_us` and `active_us` of the card_tick table suffice.
Pattern pattern_of(const CardTick& tick);

/// Returns "unmeasured", "inactive", "steady" or "bursty".
const char* to_string(Pattern pattern);

} // namespace gua::audit

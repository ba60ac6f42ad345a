// SPDX-License-Identifier: Apache-2.0
// The idle-held predicate for one process in one card-tick, shared by the report, `gua now` and
// policy so that they can never disagree about who is idle-holding a card.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/streak.hpp"

#include <vector>

namespace gua::audit {

/// True when the card-tick classified as `card` counts as active for processes without their own
/// reading: its active time is at least half of its measured time. Unmeasured time never is.
bool card_was_active(const StateTimes& card);

/// True when `p` idle-holds its card in this card-tick: a holder (is_holder) with memory > 0 (or
/// unknown memory: a live context always holds some) whose own SM utilization is below the active
/// threshold; without a per-process reading, when the card was measured and not active. Without
/// either reading (MIG) it is never idle-held: policy does not act on what was not measured.
bool is_idle_held(const ProcTick& p, const StateTimes& card, const Thresholds& thresholds);

/// The holders of `tick`, one entry per process (`keys[i]` is the process of tick.processes[i];
/// the sizes must match). A process listed with several contexts idle-holds the card only when
/// every one of its holder contexts does.
std::vector<HoldingSeen> holdings_seen(const CardTick& tick, const std::vector<ProcessKey>& keys,
                                       const Thresholds& thresholds);

} // namespace gua::audit

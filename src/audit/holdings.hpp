// SPDX-License-Identifier: Apache-2.0
// The holders of a card's newest card-tick (sampled or recorded), judged idle-held or not, and
// their streaks folded forward: the one path shared by policy, `gua now` and `gua top`.
#pragma once

#include "audit/classify.hpp"
#include "audit/streak.hpp"
#include "telemetry/tick.hpp"

#include <vector>

namespace gua::audit {

/// One card over one tick as sampled or recorded. `record` is borrowed and must outlive the view.
struct CardNow {
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    const telemetry::CardTickRecord* record = nullptr;
};

/// The audit view of `card` (identity indexes 0); keys[i] is the process of processes[i].
CardTick card_tick_of(const CardNow& card, std::vector<ProcessKey>& keys);

/// The card's holders, one per process, judged by is_idle_held (see holdings_seen).
std::vector<HoldingSeen> holdings_of(const CardNow& card, const Thresholds& thresholds);

/// Folds `cards` (one tick of each) into `book`.
void observe(StreakBook& book, const std::vector<CardNow>& cards, const Thresholds& thresholds);

/// The views of every card of `tick`.
std::vector<CardNow> cards_of(const telemetry::Tick& tick);

} // namespace gua::audit

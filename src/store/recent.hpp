// SPDX-License-Identifier: Apache-2.0
// Reading the recent past for `gua now`, `gua top` and the daemon's start-up: the newest card-tick
// of each card with its processes, idle-held streaks rewound through history, and recent states.
#pragma once

#include "audit/classify.hpp"
#include "audit/holdings.hpp"
#include "audit/memory_trend.hpp"
#include "audit/slices.hpp"
#include "audit/streak.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"
#include "telemetry/tick.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gua::store {

/// The newest recorded card-tick of one card, with its processes and their identities.
struct RecentCard {
    std::int64_t gpu_id = 0;
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    telemetry::CardTickRecord record;
};

/// What the database says about the present.
struct RecentState {
    std::optional<RunRow> run;      ///< the newest run (its interval and whether it ended)
    std::vector<RecentCard> cards;  ///< cards with a card-tick near the newest one, by index
    std::optional<TimeUs> last_end; ///< end of the newest card-tick
};

/// Reads the newest card-tick of each card that has one within three recorded intervals of the
/// newest card-tick of all; empty when nothing was recorded. One short read transaction.
RecentState read_recent(Database& db);

/// The audit view of a recent card (borrows `card`).
audit::CardNow card_now(const RecentCard& card);

/// The idle-held streaks of the processes idle-held in each of `cards` (same order), found by
/// walking the recorded history backwards (audit::StreakRewind) in short read transactions; each
/// chunk of history is decoded once for all cards.
std::vector<std::map<audit::ProcessKey, audit::Streak>>
rewind_streaks(Database& db, const std::vector<RecentCard>& cards,
               const audit::Thresholds& thresholds);

/// The same for one card.
std::map<audit::ProcessKey, audit::Streak> rewind_streaks(Database& db, const RecentCard& card,
                                                          const audit::Thresholds& thresholds);

/// Seeds `book` with the streaks of `cards` (keyed by card uuid); returns how many.
std::size_t seed_streaks(Database& db, const std::vector<RecentCard>& cards,
                         const audit::Thresholds& thresholds, audit::StreakBook& book);

/// Adds to `book` the memory each process held on each of `cards` (keyed by card uuid) in its
/// card-ticks of the last audit::k_trend_window_us up to the card's newest one, oldest first.
void read_memory_trends(Database& db, const std::vector<RecentCard>& cards, audit::TrendBook& book);

/// Classified state times per gpu id over card-ticks with from <= t0 < to.
std::map<std::int64_t, audit::StateTimes> recent_states(Database& db, TimeUs from, TimeUs to,
                                                        const audit::Thresholds& thresholds);

/// The card-ticks with from <= t0 < to, each classified, per gpu id in time order (the history
/// line of `gua top` and `gua now`).
std::map<std::int64_t, std::vector<audit::StateSpan>>
recent_spans(Database& db, TimeUs from, TimeUs to, const audit::Thresholds& thresholds);

} // namespace gua::store

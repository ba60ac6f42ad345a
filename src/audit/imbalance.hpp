// SPDX-License-Identifier: Apache-2.0
// Imbalance: an identity on several cards whose activity differs between them (a straggler, an
// unbalanced data-parallel job, a multi-card allocation used only in part). Pure: no I/O.
#pragma once

#include "core/time.hpp"

#include <optional>
#include <vector>

namespace gua::audit {

/// Difference in active share (active / (active + idle-held) of its attributed time per card)
/// between the cards of one identity from which it gets an imbalance finding.
inline constexpr double k_imbalance_share = 0.25;

/// Attributed time on a card below which it is left out of the imbalance rule.
inline constexpr DurationUs k_imbalance_min_us = k_us_per_minute;

/// One card's attributed time of an identity.
struct CardActivity {
    int gpu = 0;                 ///< driver index
    DurationUs active_us = 0;    ///< its attributed active time on the card
    DurationUs idle_held_us = 0; ///< its attributed idle-held time on the card
};

/// The busiest and the idlest of an identity's cards by active share.
struct Imbalance {
    int busiest_gpu = 0;
    double busiest_share = 0;
    int idlest_gpu = 0;
    double idlest_share = 0;
};

/// The highest and lowest active share among `cards` with at least `min_us` of attributed time;
/// nullopt with fewer than two such cards.
std::optional<Imbalance> imbalance(const std::vector<CardActivity>& cards, DurationUs min_us);

} // namespace gua::audit

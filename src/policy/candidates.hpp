// SPDX-License-Identifier: Apache-2.0
// From the cards of a tick and the streak book to the engine's candidates: processes idle-holding
// every card on which they hold memory, with the shortest of their streaks.
#pragma once

#include "audit/holdings.hpp"
#include "policy/engine.hpp"

#include <vector>

namespace gua::policy {

/// The candidates of `cards` (already folded into `book`). A process that is not idle-held on one
/// of its cards is no candidate (a multi-GPU job waiting on one rank is still working), nor is one
/// without a start time (gone from /proc, or in another pid namespace: it cannot be verified).
/// `owner` and `groups` are left empty for the caller to fill in. Pure.
std::vector<Candidate> idle_candidates(const std::vector<audit::CardNow>& cards,
                                       const audit::StreakBook& book,
                                       const audit::Thresholds& thresholds);

} // namespace gua::policy

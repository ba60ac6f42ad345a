// SPDX-License-Identifier: Apache-2.0
// Building the live view from the newest tick of each card, the idle-held streaks, the recent
// state times and the recent policy decisions. Pure.
#pragma once

#include "audit/holdings.hpp"
#include "audit/memory_trend.hpp"
#include "live/model.hpp"
#include "store/policy_log.hpp"

#include <map>
#include <string>
#include <vector>

namespace gua::live {

/// Fills `header`'s gpus, holders and decisions: one GpuNow per card, one HolderNow per holder
/// process and card (its streak from `streaks`), decisions newest first. `recent` is keyed by
/// card uuid. Each holder's memory trend and time to full come from `trends`.
NowModel build_now(NowModel header, const std::vector<audit::CardNow>& cards,
                   const audit::StreakBook& streaks,
                   const std::map<std::string, audit::StateTimes>& recent,
                   const std::vector<store::DecisionRow>& decisions,
                   const audit::Thresholds& thresholds, const audit::TrendBook& trends);

/// Adds each process's memory in `cards` (summed over its entries; none when one is unknown) to
/// `book`, at the end of its card-tick.
void observe_memory(audit::TrendBook& book, const std::vector<audit::CardNow>& cards);

/// Cuts each GPU's timeline into `count` recent_states over the model's history window, which
/// ends at its last_tick_end (no slices without one; audit::slice_states).
void slice_history(NowModel& model, int count);

/// Shares of measured time in `t`.
Shares shares_of(const audit::StateTimes& t);

} // namespace gua::live

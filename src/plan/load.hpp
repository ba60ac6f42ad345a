// SPDX-License-Identifier: Apache-2.0
// Reading a plan's demand from a gua database: the raw card-ticks of a window, with each
// process's store row (pid + start time), identity and allocation.
#pragma once

#include "audit/card_tick.hpp"
#include "plan/model.hpp"
#include "store/database.hpp"

#include <optional>
#include <string>

namespace gua::plan {

/// What to read.
struct LoadOptions {
    TimeUs from = 0;
    TimeUs to = 0;
    std::optional<std::string> gpu;  ///< only this card: index, uuid or a uuid prefix of one
    std::optional<std::string> user; ///< only card-ticks where this user had a process
    audit::Thresholds thresholds;
    std::optional<DurationUs> raw_retention_us; ///< [retention] raw, stated in the confidence
};

/// Reads the demand of `options`' window from `db` (short read transactions, a week each).
/// Throws Fatal (usage) when --gpu or --user names nothing in the database.
Demand load_demand(store::Database& db, const LoadOptions& options);

} // namespace gua::plan

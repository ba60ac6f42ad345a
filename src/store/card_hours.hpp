// SPDX-License-Identifier: Apache-2.0
// Per-card state times of rolled-up hours: what a report's timeline reads where the window's totals
// came from daily rollups but its buckets are finer than a day.
#pragma once

#include "audit/classify.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <vector>

namespace gua::store {

/// One card's state times in one rolled-up UTC hour.
struct CardHour {
    std::int64_t hour = 0;   ///< UTC hour number (microseconds / 3600e6)
    std::int64_t gpu_id = 0; ///< the gpu table's id
    audit::StateTimes states;
};

/// The hourly rollups' per-card state times of hours [first_hour, end_hour), by hour then card;
/// read a week at a time, each in its own short read transaction.
std::vector<CardHour> read_card_hours(Database& db, std::int64_t first_hour, std::int64_t end_hour);

} // namespace gua::store

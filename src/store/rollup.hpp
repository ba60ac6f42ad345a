// SPDX-License-Identifier: Apache-2.0
// Hourly and daily rollups: per UTC hour, per card and per (card, identity) totals computed from
// the raw card-ticks by audit::WindowAccumulator; per UTC day, their sums. Adding them to an
// accumulator equals adding the ticks (see WindowAccumulator::can_add_rollup).
#pragma once

#include "audit/card_tick.hpp"
#include "audit/window.hpp"
#include "store/database.hpp"
#include "store/raw.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// UTC day number of an hour number.
inline std::int64_t day_of_hour(std::int64_t hour) {
    return hour / 24 - (hour % 24 < 0 ? 1 : 0);
}

/// A rollup as read back: its first hour, how many hours it spans (1 or 24), the thresholds it
/// was computed with, and its totals.
struct StoredRollup {
    std::int64_t first_hour = 0;
    std::int64_t span_hours = 1;
    std::int64_t hours_with_ticks = 0; ///< hourly rollups the day was summed from
    std::int64_t off_hours_mask = 0;   ///< a day's: bit k set when hour k was split as off-hours
    audit::Thresholds thresholds;
    audit::RollupTotals totals;
};

/// Computes and deletes rollups. Not thread-safe; `db` must outlive it. Runs inside the caller's
/// transaction.
class RollupBuilder {
  public:
    explicit RollupBuilder(Database& db);
    /// Recomputes the rollup of `hour` from its raw card-ticks with `thresholds`, replacing any
    /// previous one and dropping its day's rollup. Returns false (keeping an existing rollup)
    /// when the hour has no raw ticks.
    bool build(std::int64_t hour, const audit::Thresholds& thresholds);
    /// Compares the stored rollup of `hour` (computed with `thresholds`) with its raw
    /// card-ticks, card by card where the raw ticks are all still there. Returns one line per
    /// card that disagrees. Writes nothing.
    std::vector<std::string> verify(std::int64_t hour, const audit::Thresholds& thresholds);
    /// Sums the hourly rollups of UTC day `day` into its daily rollup. Returns false (building
    /// nothing) when an hour of the day has raw ticks but no rollup, or its hours were computed
    /// with different thresholds.
    bool build_day(std::int64_t day);
    /// Deletes the rollup of `hour`, if any, and its day's.
    void drop(std::int64_t hour);
    /// True when `hour` has a rollup.
    bool exists(std::int64_t hour);
    /// Hours that have raw card-ticks but no rollup, ascending.
    std::vector<std::int64_t> hours_without_rollup();
    /// Days that have hourly rollups but no daily rollup, ascending.
    std::vector<std::int64_t> days_without_rollup();

  private:
    void drop_day(std::int64_t day);

    Database& m_db;
    BlockScanner m_scanner;
    ProcessIdentities m_identities;
    Statement m_exists;
    Statement m_insert_hour;
    Statement m_insert_gpu;
    Statement m_insert_identity;
    std::array<Statement, 3> m_delete;
    std::array<Statement, 3> m_delete_day;
};

/// Builds the rollups of every hour before the hour of `before` that has raw card-ticks but no
/// rollup, with `thresholds`, then the daily rollups of days that ended before it; one
/// transaction per day of hours. Returns how many hourly rollups it built.
std::size_t build_missing_rollups(Database& db, TimeUs before, const audit::Thresholds& thresholds);

/// Reads rollups back. With a gpu, only that card's rows, with that card's own states and
/// coverage; otherwise all cards and the coverage of all cards together. `db` must outlive it.
class RollupReader {
  public:
    RollupReader(Database& db, std::optional<std::int64_t> gpu);
    /// Reads the hourly rollups of hours [first_hour, end_hour), ascending, into `out` (cleared
    /// first). A rolled-up hour in which the selected card has no ticks comes back with no
    /// cards. Runs inside the caller's transaction, if any.
    void hours(std::int64_t first_hour, std::int64_t end_hour, std::vector<StoredRollup>& out);
    /// Reads the daily rollups of days [first_day, end_day), ascending, into `out` (cleared
    /// first), each with the hourly slices (heatmap states, coverage) of its hours. Only for
    /// readers without a gpu.
    void days(std::int64_t first_day, std::int64_t end_day, std::vector<StoredRollup>& out);

  private:
    std::optional<std::int64_t> m_gpu;
    Statement m_hours;
    Statement m_cards;
    Statement m_identities;
    Statement m_days;
    Statement m_day_cards;
    Statement m_day_identities;
};

} // namespace gua::store

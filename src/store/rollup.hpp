// Hourly rollups: per UTC hour, per card and per (card, identity) totals computed from the raw
// card-ticks by audit::WindowAccumulator, so that adding them equals adding the ticks.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/window.hpp"
#include "store/database.hpp"
#include "store/raw.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace gua::store {

/// One hour's rollup as read back: the thresholds it was computed with, and its totals.
struct StoredHour {
    std::int64_t hour = 0; ///< hours since the epoch (UTC)
    audit::Thresholds thresholds;
    audit::HourTotals totals;
};

/// Computes and deletes rollups. Not thread-safe; `db` must outlive it. Runs inside the caller's
/// transaction.
class RollupBuilder {
  public:
    explicit RollupBuilder(Database& db);
    /// Recomputes the rollup of `hour` from its raw card-ticks with `thresholds`, replacing any
    /// previous one. Returns false (keeping an existing rollup) when the hour has no raw ticks.
    bool build(std::int64_t hour, const audit::Thresholds& thresholds);
    /// Deletes the rollup of `hour`, if any.
    void drop(std::int64_t hour);
    /// True when `hour` has a rollup.
    bool exists(std::int64_t hour);
    /// Hours that have raw card-ticks but no rollup, ascending.
    std::vector<std::int64_t> hours_without_rollup();

  private:
    Database& m_db;
    BlockScanner m_scanner;
    ProcessIdentities m_identities;
    Statement m_exists;
    Statement m_insert_hour;
    Statement m_insert_gpu;
    Statement m_insert_identity;
    std::array<Statement, 3> m_delete;
};

/// Builds the rollups of every hour before the hour of `before` that has raw card-ticks but no
/// rollup, with `thresholds`, one transaction per day of hours. Returns how many it built.
std::size_t build_missing_rollups(Database& db, TimeUs before, const audit::Thresholds& thresholds);

/// Reads rollups back. With a gpu, only that card's rows with that card's own coverage;
/// otherwise all cards and the coverage of all cards together. `db` must outlive it.
class RollupReader {
  public:
    RollupReader(Database& db, std::optional<std::int64_t> gpu);
    /// Reads the rollups of hours [first_hour, end_hour), ascending, into `out` (cleared first).
    /// A rolled-up hour in which the selected card has no ticks comes back with no cards. Runs
    /// inside the caller's transaction, if any.
    void read(std::int64_t first_hour, std::int64_t end_hour, std::vector<StoredHour>& out);

  private:
    std::optional<std::int64_t> m_gpu;
    Statement m_hours;
    Statement m_cards;
    Statement m_identities;
};

} // namespace gua::store

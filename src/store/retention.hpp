// SPDX-License-Identifier: Apache-2.0
// Retention: raw card-ticks and rollups older than their configured periods are deleted in small
// batches, freed pages go back to the file system, and the WAL is kept bounded.
#pragma once

#include "audit/card_tick.hpp"
#include "core/time.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <optional>

namespace gua::store {

/// How long data is kept. nullopt keeps it forever.
struct RetentionPolicy {
    std::optional<DurationUs> raw_us = 90 * k_us_per_day; ///< raw card-ticks (tick blocks)
    std::optional<DurationUs> rollup_us;                  ///< hourly rollups
};

/// What one Retention::step() did.
struct RetentionStep {
    std::int64_t blocks_deleted = 0;
    std::int64_t rollup_hours_deleted = 0;
    std::int64_t pages_freed = 0;
    bool checkpointed = false;
    bool more = false; ///< work is left for the next step
};

/// Enforces a policy in steps small enough to run after every daemon tick. Raw blocks are deleted
/// only from hours that have a rollup (or whose rollup is itself past its period), so nothing
/// within a retention period is lost. Before raw blocks go, the allocations they overlap have
/// their per-job summaries brought up to the blocks' end (store/job_summary.hpp), classified with
/// `thresholds`. Not thread-safe; `db` must outlive it.
class Retention {
  public:
    static constexpr std::int64_t k_batch_blocks = 200;
    static constexpr std::int64_t k_batch_hours = 24;
    static constexpr std::int64_t k_vacuum_pages = 256;
    static constexpr std::int64_t k_wal_limit_bytes = 64LL << 20;

    Retention(Database& db, RetentionPolicy policy, audit::Thresholds thresholds = {});
    /// Does one small step of work at wall time `now` (UTC µs), each part in its own short
    /// transaction. Returns at once, doing nothing, when called again within a minute of a step
    /// that left no work. Throws Fatal on database errors.
    RetentionStep step(TimeUs now);
    /// Steps until no work is left; returns the sum of the steps.
    RetentionStep run_to_completion(TimeUs now);

  private:
    std::int64_t delete_raw(TimeUs now);
    std::int64_t delete_rollups(TimeUs now);
    std::int64_t vacuum_pages();
    bool checkpoint(TimeUs now);

    Database& m_db;
    RetentionPolicy m_policy;
    audit::Thresholds m_thresholds;
    bool m_incremental;
    std::optional<TimeUs> m_last_idle_check;
    std::optional<TimeUs> m_last_checkpoint;
};

/// Runs PRAGMA wal_checkpoint(TRUNCATE); returns false when readers kept it from finishing.
bool truncate_wal(Database& db);

/// Size of the database's -wal file in bytes (0 when there is none).
std::int64_t wal_bytes(const Database& db);

} // namespace gua::store

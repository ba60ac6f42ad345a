// SPDX-License-Identifier: Apache-2.0
// store::Writer: appends ticks to the database (tick blocks, one transaction per tick) with
// dimension caches, and keeps the hourly rollups of finished hours up to date. The block being
// filled lives at rowid −run id and moves to the end of the table when it closes, so closed
// blocks are packed densely.
#pragma once

#include "audit/card_tick.hpp"
#include "store/allocations.hpp"
#include "store/block.hpp"
#include "store/database.hpp"
#include "store/rollup.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>

namespace gua::store {

/// Facts about one recording run (one daemon or demo start).
struct RunInfo {
    std::string host;
    std::string driver_version;
    std::string source; ///< "nvml", "synthetic:<workload>", "import:<format>"
    DurationUs interval_us = 0;
    double active_threshold_pct = 10.0;
    TimeUs started_us = 0;
    std::int64_t held_mib = 100;     ///< rollups use these thresholds (with active_threshold_pct)
    bool graphics_is_holder = false; ///< rollups count graphics contexts as holders
};

/// Writes ticks of one run. The database must already be migrated. Not thread-safe.
class Writer {
  public:
    /// Records the run and keeps `db` (which must outlive the writer).
    Writer(Database& db, const RunInfo& run);
    /// Appends to the existing run `run_id` (converting old files) with the thresholds its
    /// rollups use; records nothing about the run itself.
    Writer(Database& db, std::int64_t run_id, const audit::Thresholds& thresholds);
    /// Writes `tick` in one BEGIN IMMEDIATE transaction (see append()). When it fails nothing of
    /// the tick is stored and the next tick starts afresh.
    void write(const telemetry::Tick& tick);
    /// Writes `tick` inside the caller's transaction: extends the open tick block (or starts one)
    /// and, when the tick is in a later hour than earlier ticks, computes the rollups of the hours
    /// it left behind. A tick in an hour that already has a rollup invalidates that rollup. When
    /// the caller's transaction rolls back, the caller must call discard_unsaved().
    void append(const telemetry::Tick& tick);
    /// Stops computing rollups as hours pass (bulk imports build them once at the end with
    /// build_missing_rollups()).
    void defer_rollups() { m_defer_rollups = true; }
    /// Forgets cached state that a rolled-back transaction may have made stale.
    void discard_unsaved();
    /// Computes the rollups of every hour before `t` that has raw card-ticks but no rollup (the
    /// caller's transaction). Used by importers once they are done.
    void roll_up_before(TimeUs t);
    /// Closes the open block inside the caller's transaction (the run row is left as it is).
    void close_open_block();
    /// Stamps the run's end time and closes the open block (its own transaction).
    void finish(TimeUs ended_us);
    std::int64_t run_id() const { return m_run_id; }
    /// Card-ticks written by this writer.
    std::uint64_t card_rows() const { return m_card_rows; }
    /// The caches of identity and process row ids (looked up in the database on a miss) are
    /// emptied when they reach this many entries.
    static constexpr std::size_t k_max_cached_ids = 16384;
    /// Entries of the writer's caches of processes and identities (bounded: the processes of the
    /// last tick, and at most k_max_cached_ids row ids of each kind).
    std::size_t cached_entries() const {
        return m_recent.size() + m_processes.size() + m_identities.size();
    }

  private:
    Writer(Database& db, const audit::Thresholds& thresholds);
    std::int64_t gpu_id(const telemetry::DeviceInfo& device);
    std::int64_t identity_id(const telemetry::Identity& identity);
    std::int64_t process_id(const telemetry::ProcessTick& p);
    std::int64_t process_id_slow(const telemetry::ProcessTick& p);
    void load_pending();
    void enter_hour(std::int64_t hour);
    /// Inserts or updates the open block; false when the update found no open block to update.
    bool store_block();

    Database& m_db;
    std::int64_t m_run_id = 0;
    audit::Thresholds m_thresholds;
    std::uint64_t m_card_rows = 0;
    Statement m_insert_block;
    Statement m_update_block;
    Statement m_close_block;
    BlockBuilder m_block;
    BlockLayout m_layout;
    RollupBuilder m_rollups;
    AllocationWriter m_allocations;
    bool m_pending_loaded = false;
    bool m_defer_rollups = false;
    std::set<std::int64_t> m_pending_hours;
    std::set<std::int64_t> m_pending_days;
    std::optional<std::int64_t> m_hour;
    std::unordered_map<std::string, std::pair<std::int64_t, telemetry::DeviceInfo>> m_gpus;
    std::unordered_map<std::string, std::int64_t> m_identities;
    std::unordered_map<std::string, std::int64_t> m_processes;
    struct PidHash {
        std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const {
            return std::hash<std::uint64_t>{}(k.second * 0x9E3779B97F4A7C15ULL ^ k.first);
        }
    };
    /// A process of the last tick: its identity, row id, and the tick that last listed it.
    struct Recent {
        telemetry::Identity identity;
        std::int64_t id = 0;
        std::uint64_t tick = 0;
    };
    /// (pid, start ticks) → the process as the last tick listed it: the per-tick fast path. Only
    /// the processes of the last tick are kept, so it never grows with processes that exited.
    std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, Recent, PidHash> m_recent;
    std::uint64_t m_tick = 0; ///< ticks appended
};

} // namespace gua::store

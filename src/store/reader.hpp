// SPDX-License-Identifier: Apache-2.0
// store::Reader: the dimension tables and a chunked, ordered scan of card-ticks for reports.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/window.hpp"
#include "store/database.hpp"
#include "store/raw.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// A row of the run table.
struct RunRow {
    std::int64_t id = 0;
    std::string host;
    std::string driver_version;
    std::string source;
    std::string gua_version;
    DurationUs interval_us = 0;
    double active_threshold_pct = 10.0;
    TimeUs started_us = 0;
    std::optional<TimeUs> ended_us;
};

/// A row of the gpu table. `id` is also the GPU index used in audit::CardTick.
struct GpuRow {
    std::int64_t id = 0;
    std::string uuid;
    int index = 0;
    std::string name;
    std::optional<std::int64_t> memory_total_mib;
    std::string parent_uuid;
};

/// A row of the identity table. `id` is the identity index used in audit::ProcTick.
struct IdentityRow {
    std::int64_t id = 0;
    telemetry::Identity identity;
};

/// Where the totals of Reader::accumulate() came from.
struct WindowSources {
    std::uint64_t rollup_hours = 0; ///< whole hours added from rollups (exact)
    std::uint64_t rollup_days = 0;  ///< of which in whole days from daily rollups
    std::uint64_t raw_ticks = 0;    ///< card-ticks added one by one
    /// Hours beyond the raw retention added from rollups although that is not exact (other
    /// thresholds, a time zone with a non-whole-hour offset): an approximation.
    std::uint64_t approximate_hours = 0;
};

/// Reads a gua database. Every query runs in short read transactions (at most a week of data
/// each), so a report never blocks the daemon's WAL checkpoints for long.
class Reader {
  public:
    explicit Reader(Database& db) : m_db(db) {}
    std::vector<RunRow> runs();
    std::vector<GpuRow> gpus();
    std::vector<IdentityRow> identities();
    /// Start of the first tick block and end of the last raw card-tick, if any (after a clock
    /// step back, ticks may start up to an hour before the first block).
    std::optional<std::pair<TimeUs, TimeUs>> span();
    /// Number of raw card-ticks stored.
    std::uint64_t card_tick_count();
    /// Start of the first and end of the last rolled-up hour, if any.
    std::optional<std::pair<TimeUs, TimeUs>> rollup_span();
    /// The allocations (Slurm jobs, pods, reservations) that held a card during [from, to),
    /// ordered by their row id, each with its first and last time over the whole recording.
    /// scan(from, to, …) with the same window indexes this list in CardTick::allocations.
    std::vector<audit::AllocationRow> allocations(TimeUs from, TimeUs to);
    /// Calls `fn` for each raw card-tick with from <= t0 < to, ordered by (t0, gpu id), with its
    /// processes (identity = identity row id) and its allocations (AllocationShare::allocation =
    /// index in allocations(from, to); an allocation that began at or after `to`, inside the
    /// last card-tick, is not among them). The CardTick is reused between calls.
    void scan(TimeUs from, TimeUs to, const std::function<void(const audit::CardTick&)>& fn);
    /// Adds everything recorded with from <= t0 < to (only GPU id `gpu` when given) to `acc`, in
    /// time order: whole UTC hours from their rollups where that gives exactly the result of
    /// adding their card-ticks (same thresholds as `acc`, see WindowAccumulator::can_add_hour),
    /// raw card-ticks elsewhere. Hours whose raw card-ticks are gone use their rollup anyway. Raw
    /// card-ticks carry their allocations as scan() gives them (indexing allocations(from, to)).
    WindowSources accumulate(TimeUs from, TimeUs to, std::optional<std::int64_t> gpu,
                             audit::WindowAccumulator& acc);
    /// Tick blocks that scan() and accumulate() left out because they do not decode (a report
    /// says so: bad_blocks_note()).
    const std::vector<BadBlock>& bad_blocks() const { return m_bad; }

  private:
    void note(const BlockScanner& scanner);

    Database& m_db;
    std::vector<BadBlock> m_bad;
};

} // namespace gua::store

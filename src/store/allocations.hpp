// SPDX-License-Identifier: Apache-2.0
// The allocation tables: one row per allocation (Slurm job, pod, reservation) and its spans per
// card, extended tick by tick while it holds the card; written with the ticks, read for reports.
#pragma once

#include "audit/card_tick.hpp"
#include "store/database.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gua::store {

/// Writes the owners of card-ticks into allocation and allocation_span (the caller's
/// transaction). A span continues while an owner's next stretch on the same card begins where
/// its last ended; otherwise a new span starts. Not thread-safe; `db` must outlive it.
class AllocationWriter {
  public:
    explicit AllocationWriter(Database& db) : m_db(db) {}
    /// Records `owners` of one card-tick of run `run_id` on card `gpu_id` (the allocation rows
    /// carry the run's host).
    void add(std::int64_t run_id, std::int64_t gpu_id,
             const std::vector<telemetry::AllocationOwner>& owners);
    /// Forgets cached row ids (after a rolled-back transaction).
    void forget();

  private:
    std::int64_t allocation_id(const telemetry::AllocationOwner& owner);
    void prepare(std::int64_t run_id);

    Database& m_db;
    std::optional<std::string> m_host; ///< of the run, read once
    std::optional<Statement> m_insert_allocation;
    std::optional<Statement> m_find_allocation;
    std::optional<Statement> m_insert_span;
    std::optional<Statement> m_extend_span;
    /// (kind, id, user, account) → allocation row id.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::int64_t> m_ids;
    struct Open {
        std::int64_t span_id = 0;
        TimeUs end_us = 0;
    };
    /// (allocation id, gpu id) → its latest span.
    std::map<std::pair<std::int64_t, std::int64_t>, Open> m_open;
};

/// One stored span: allocation row id, gpu id, [begin, end).
struct AllocationSpan {
    std::int64_t allocation_id = 0;
    std::int64_t gpu_id = 0;
    TimeUs begin_us = 0;
    TimeUs end_us = 0;
};

/// The allocations whose spans overlap [from, to), each with its first and last time over the
/// whole recording, ordered by allocation row id; `spans` are their spans overlapping the
/// window, ordered by (gpu id, begin), with `allocation_id` replaced by the index in `rows`.
struct WindowAllocations {
    std::vector<audit::AllocationRow> rows;
    std::vector<std::int64_t> ids; ///< the allocation row id of each of `rows`
    std::vector<AllocationSpan> spans;
};

/// Reads the allocations of [from, to) (the caller's read transaction, if any).
WindowAllocations read_allocations(Database& db, TimeUs from, TimeUs to);

/// Fills card-ticks' allocations from a window's spans. Card-ticks must come in time order per
/// card (as Reader::scan passes them): each card keeps a cursor past the spans that ended.
class AllocationShares {
  public:
    explicit AllocationShares(const WindowAllocations& window) : m_window(window) {}
    /// Sets `tick.allocations` to the overlap of each allocation's spans with the tick.
    void fill(audit::CardTick& tick);

  private:
    const WindowAllocations& m_window;
    std::map<std::int64_t, std::size_t> m_cursor; ///< gpu id → first span that may still overlap
};

} // namespace gua::store

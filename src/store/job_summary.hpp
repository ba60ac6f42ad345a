// SPDX-License-Identifier: Apache-2.0
// Per-job summaries: each allocation's figures per card, added up from the raw card-ticks just
// before retention deletes them, so that `gua job` and `gua report --group-by job` still answer
// for jobs whose card-ticks are gone.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/job.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// One allocation's stored summary: its figures per card (by gpu row id) over the card-ticks
/// that start before `through_us`, classified with `thresholds`.
struct StoredJobSummary {
    TimeUs through_us = 0;
    audit::Thresholds thresholds;
    std::map<std::int64_t, audit::JobPartial> cards;
};

/// An allocation row with its database id.
struct AllocationRecord {
    std::int64_t id = 0;
    audit::AllocationRow row;
};

/// The allocation rows recorded under `alloc_id` (a Slurm job id, "<namespace>/<pod>", a
/// reservation's name), each with its first and last time, ordered by id.
std::vector<AllocationRecord> find_allocations(Database& db, const std::string& alloc_id);

/// The allocation row ids of a window, in the order of read_allocations(db, from, to).rows.
std::vector<std::int64_t> window_allocation_ids(Database& db, TimeUs from, TimeUs to);

/// The stored summaries of the allocations `ids` (those that have one).
std::map<std::int64_t, StoredJobSummary> read_job_summaries(Database& db,
                                                            const std::vector<std::int64_t>& ids);

/// Brings the summary of every allocation that held a card during [from, to) up to `to`: adds
/// the raw card-ticks starting in [its through_us, to) (from its first card-tick when it has no
/// summary yet) with `thresholds`. Retention calls it, inside its transaction, before deleting
/// tick blocks that end by `to`. Returns how many allocations it brought up to date.
std::size_t summarize_allocations(Database& db, TimeUs from, TimeUs to,
                                  const audit::Thresholds& thresholds);

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// The policy decision log: the daemon appends (and updates the outcome of) decisions; `gua now`
// and the report read them back.
#pragma once

#include "core/time.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// One row of policy_decision (docs/schema.md).
struct DecisionRow {
    std::int64_t id = 0;
    TimeUs time_us = 0;
    std::string rule;
    std::string action; ///< log | notify | terminate
    bool dry_run = true;
    std::string verdict; ///< act | dry-run | exempt | protected | rate-limited
    std::string outcome; ///< what happened, e.g. notified, released (docs/policy.md)
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> start_ticks;
    std::string user;
    std::optional<std::uint32_t> uid;
    std::string command;
    std::string container_id;
    std::string gpu_uuid;  ///< comma-separated when the process idle-held several cards
    std::string gpu_index; ///< comma-separated driver indexes, e.g. "0" or "0,3"
    std::optional<std::int64_t> memory_mib;
    DurationUs idle_us = 0;
    double reclaimed_gib_hours = 0; ///< estimate, set when a termination released memory
    std::string detail;
    TimeUs updated_us = 0;
};

/// True when `db` has the policy_decision table (schema version 2 or later).
bool has_policy_log(Database& db);

/// Appends decisions to a migrated database. Not thread-safe; `db` must outlive it.
class DecisionLog {
  public:
    explicit DecisionLog(Database& db);
    /// Inserts `row` (its id is ignored) and returns the new id.
    std::int64_t insert(const DecisionRow& row);
    /// Sets the outcome, detail and reclaimed estimate of decision `id` at time `at`.
    void update(std::int64_t id, const std::string& outcome, const std::string& detail,
                double reclaimed_gib_hours, TimeUs at);

  private:
    Database& m_db;
    Statement m_insert;
    Statement m_update;
};

/// Decisions with from <= time_us < to, oldest first; empty when the table does not exist.
std::vector<DecisionRow> read_decisions(Database& db, TimeUs from, TimeUs to);

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Schema migration 2: the policy decision log (docs/schema.md "policy_decision").
#pragma once

#include <string_view>

namespace gua::store {

/// Adds policy_decision (one row per decision, including dry runs and held-back ones; outcome is
/// updated as a termination progresses) and the policy_action view for administrators.
inline constexpr std::string_view k_policy_migration = R"sql(
CREATE TABLE policy_decision (
    id INTEGER PRIMARY KEY,
    time_us INTEGER NOT NULL,
    rule TEXT NOT NULL,
    action TEXT NOT NULL,
    dry_run INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    outcome TEXT NOT NULL,
    pid INTEGER NOT NULL,
    start_ticks INTEGER,
    user TEXT NOT NULL,
    uid INTEGER,
    command TEXT NOT NULL DEFAULT '',
    container_id TEXT NOT NULL DEFAULT '',
    gpu_uuid TEXT NOT NULL DEFAULT '',
    gpu_index TEXT NOT NULL DEFAULT '',
    memory_mib INTEGER,
    idle_us INTEGER NOT NULL,
    reclaimed_gib_hours REAL NOT NULL DEFAULT 0,
    detail TEXT NOT NULL DEFAULT '',
    updated_us INTEGER NOT NULL
);
CREATE INDEX policy_decision_time ON policy_decision (time_us);

CREATE VIEW policy_action AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', time_us / 1000000, 'unixepoch') AS time_utc,
       rule, action, CASE dry_run WHEN 1 THEN 'dry-run' ELSE 'real' END AS mode, verdict,
       outcome, pid, user, command, gpu_index AS gpu, memory_mib, idle_us / 1e6 AS idle_s,
       reclaimed_gib_hours, detail
FROM policy_decision;
)sql";

} // namespace gua::store

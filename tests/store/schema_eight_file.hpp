// SPDX-License-Identifier: Apache-2.0
// Turns a file written by this gua into the file gua of schema 8 wrote for the same data: the
// rollups' evidence BLOBs as (number, 8 bytes) entries, and without schema 10's identity names and
// the streams added after schema 8 (schema 8 had the same tables otherwise).
#pragma once

#include "evidence_bytes.hpp"
#include "store/database.hpp"
#include "store/frozen_sql.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace gua::testing {

/// A rollup table with an evidence BLOB.
struct EvidenceTable {
    const char* name;
    const char* key;
    bool card; ///< card evidence (doubles among its fields); else identity evidence
};
inline constexpr std::array<EvidenceTable, 4> k_evidence_tables{
    {{"rollup_gpu", "hour, gpu_id", true},
     {"rollup_day_gpu", "day, gpu_id", true},
     {"rollup_identity", "hour, gpu_id, identity_id", false},
     {"rollup_day_identity", "day, gpu_id, identity_id", false}}};

/// Bytes of all evidence BLOBs of `db`.
inline std::int64_t evidence_bytes(store::Database& db) {
    std::int64_t sum = 0;
    for (const EvidenceTable& t : k_evidence_tables) {
        sum += db.scalar(fmt::format("SELECT coalesce(sum(length(evidence)), 0) FROM {}", t.name));
    }
    return sum;
}

/// Takes the schemas after 8 out of `db`: the identity name columns (10), the per-process idle-held
/// stream (11), the allocation streams, tables and rollup columns (13), the per-job summaries (15),
/// the fault table (16), the per-card field streams added since (card_fields.def, `since` above
/// 8), and the views as schema 7 made them.
inline void undo_schema_ten(store::Database& db) {
    db.exec("DROP VIEW process_tick; DROP VIEW card_tick_state; DROP VIEW proc_tick; "
            "DROP VIEW card_tick; DROP VIEW block_card; DROP VIEW block_tick; "
            "ALTER TABLE identity DROP COLUMN pod_namespace; "
            "ALTER TABLE identity DROP COLUMN pod_name; "
            "ALTER TABLE identity DROP COLUMN container_name; "
            "ALTER TABLE tick_block DROP COLUMN proc_idle_held_us; "
            "DROP TABLE allocation_summary; DROP TABLE allocation_summarized; "
            "DROP TABLE allocation_span; DROP TABLE allocation; DROP TABLE fault_event; "
            "ALTER TABLE tick_block DROP COLUMN alloc_shape; "
            "ALTER TABLE tick_block DROP COLUMN alloc_us; "
            "ALTER TABLE rollup_hour DROP COLUMN allocated_unused_us; "
            "ALTER TABLE rollup_gpu DROP COLUMN allocated_unused_us; "
            "ALTER TABLE rollup_day_gpu DROP COLUMN allocated_unused_us;");
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.since > 8) {
            db.exec(fmt::format("ALTER TABLE tick_block DROP COLUMN {}", f.column));
        }
    }
    const std::string_view v7 = store::frozen_sql(7);
    db.exec(v7.substr(v7.find("CREATE VIEW block_tick AS")));
}

/// Rewrites every evidence BLOB of `db` (a file of this gua) as gua of schema 8 wrote it, and marks
/// the file schema 8. A BLOB that is not one compact BLOB is a test failure.
inline void make_schema_eight(store::Database& db) {
    undo_schema_ten(db);
    for (const EvidenceTable& t : k_evidence_tables) {
        std::vector<std::string> blobs;
        store::Statement distinct = db.prepare(
            fmt::format("SELECT DISTINCT evidence FROM {} WHERE length(evidence) > 0", t.name));
        while (distinct.step()) {
            blobs.emplace_back(distinct.blob(0));
        }
        store::Statement update =
            db.prepare(fmt::format("UPDATE {} SET evidence = ?1 WHERE evidence = ?2", t.name));
        for (const std::string& blob : blobs) {
            const auto fields = read_compact(blob, t.card ? is_card_double : no_doubles);
            if (!fields) {
                ADD_FAILURE() << t.name << ": not one compact BLOB";
                continue;
            }
            update.bind_blob(1, legacy_blob(*fields));
            update.bind_blob(2, blob);
            update.run();
        }
    }
    db.exec("PRAGMA user_version = 8");
}

} // namespace gua::testing

// SPDX-License-Identifier: Apache-2.0
// The database schema: numbered migrations gated by PRAGMA user_version, and the file's identity.
#pragma once

#include "store/database.hpp"
#include "store/file_kind.hpp"

#include <cstdint>

namespace gua::store {

/// The schema version this binary writes and understands.
inline constexpr std::int64_t k_schema_version = 13;

/// The schema whose migration rewrites the rollups' evidence BLOBs in a shorter format: their
/// pages stay partly empty, and the file as large, until it is vacuumed.
inline constexpr std::int64_t k_compact_evidence_schema = 9;

/// Brings `db` up to k_schema_version, one transaction per migration (a new file: the newest
/// schema, src/store/migrations/current.sql, in one). Throws Fatal for a file of
/// another application or a newer schema (written by a newer gua).
void migrate(Database& db);

/// Brings `db` up to schema `version` (≤ k_schema_version) only: for tests of migrations (a
/// target below k_schema_version runs the migrations one by one, a new file included).
void migrate_to(Database& db, std::int64_t version);

/// Checks, without writing, that `db` is a gua database this binary can read. Throws Fatal.
void check_readable(Database& db);

} // namespace gua::store

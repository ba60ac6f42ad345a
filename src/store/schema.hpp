// SPDX-License-Identifier: Apache-2.0
// The database schema: numbered migrations gated by PRAGMA user_version, and the file's identity.
#pragma once

#include "store/database.hpp"
#include "store/file_kind.hpp"
#include "store/schema_version.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gua::store {

/// The schema version this binary writes and understands: the newest migration file
/// (src/store/migrations/v<N>.sql; CMake finds it, cmake/GuaMigrations.cmake).
inline constexpr std::int64_t k_schema_version = k_newest_migration;

/// The schema whose migration rewrites the rollups' evidence BLOBs in a shorter format: their
/// pages stay partly empty, and the file as large, until it is vacuumed.
inline constexpr std::int64_t k_compact_evidence_schema = 9;

/// Brings `db` up to k_schema_version, one transaction per migration (a new file: the newest
/// schema, current_schema_sql(), in one). Throws Fatal for a file of
/// another application or a newer schema (written by a newer gua).
void migrate(Database& db);

/// Brings `db` up to schema `version` (≤ k_schema_version) only: for tests of migrations (a
/// target below k_schema_version runs the migrations one by one, a new file included).
void migrate_to(Database& db, std::int64_t version);

/// Checks, without writing, that `db` is a gua database this binary can read. Throws Fatal.
void check_readable(Database& db);

/// The schema of a new file in one step: what every migration, run one version at a time, leaves
/// in sqlite_schema. Generated at build time (src/store/migrations/make_current.cpp); empty in
/// that tool itself, which makes new files step by step.
std::string_view current_schema_sql();

/// What the migrations left in `db`'s sqlite_schema, in the order they made it, as the SQL that
/// makes it again in one step (with a comment saying so): the text of current_schema_sql().
std::string schema_sql_of(Database& db);

} // namespace gua::store

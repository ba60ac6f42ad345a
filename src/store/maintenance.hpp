// SPDX-License-Identifier: Apache-2.0
// Database maintenance behind `gua db`: statistics, integrity checks, vacuum and online backup.
#pragma once

#include "core/time.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::store {

/// Size of one table or index (from the dbstat virtual table).
struct TableSize {
    std::string name;
    std::int64_t bytes = 0;
};

/// Sizes, row counts and time spans of a gua database.
struct DbStats {
    std::int64_t schema_version = 0;
    std::int64_t page_size = 0;
    std::int64_t page_count = 0;
    std::int64_t freelist_pages = 0;
    std::int64_t wal_bytes = 0;
    std::string auto_vacuum; ///< "none", "full" or "incremental"
    std::uint64_t card_ticks = 0;
    std::int64_t blocks = 0;
    std::optional<std::pair<TimeUs, TimeUs>> raw_span;
    std::int64_t rollup_hours = 0;
    std::optional<std::pair<TimeUs, TimeUs>> rollup_span;
    std::int64_t runs = 0;
    std::int64_t demo_runs = 0; ///< runs of `gua demo` (synthetic data)
    std::int64_t gpus = 0;
    std::int64_t identities = 0;
    std::int64_t processes = 0;
    std::vector<TableSize> tables; ///< largest first; empty when dbstat is not available
};

/// Collects statistics in one read transaction. Throws Fatal for a file that is not gua's.
DbStats collect_stats(Database& db);

/// Runs PRAGMA integrity_check, foreign_key_check and decodes every tick block. Returns the
/// problems found, one line each; empty when the database is sound.
std::vector<std::string> check_database(Database& db);

/// Returns every free page to the file system, rebuilds the file (VACUUM) and truncates the WAL.
/// Returns the file size before and after in bytes.
std::pair<std::int64_t, std::int64_t> vacuum_database(Database& db);

/// How long backup_database() waits, in total, while another connection keeps the file busy.
inline constexpr int k_backup_busy_ms = 30000;

/// Copies `db` to a new file `dest` with SQLite's online backup API: a consistent snapshot, safe
/// while the daemon writes. Throws Fatal when `dest` exists or the copy fails.
void backup_database(Database& db, const std::string& dest);

} // namespace gua::store

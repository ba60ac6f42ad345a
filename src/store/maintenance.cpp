// SPDX-License-Identifier: Apache-2.0
// gua db stats / check / vacuum / backup, on top of SQLite pragmas and the backup API.
#include "store/maintenance.hpp"

#include "core/fatal.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/run_kinds.hpp"
#include "store/schema.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>

namespace gua::store {

namespace {

std::int64_t file_bytes(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<std::int64_t>(size);
}

} // namespace

DbStats collect_stats(Database& db) {
    check_readable(db);
    DbStats s;
    db.exec("BEGIN");
    s.schema_version = db.scalar("PRAGMA user_version");
    s.page_size = db.scalar("PRAGMA page_size");
    s.page_count = db.scalar("PRAGMA page_count");
    s.freelist_pages = db.scalar("PRAGMA freelist_count");
    const std::int64_t av = db.scalar("PRAGMA auto_vacuum");
    s.auto_vacuum = av == 2 ? "incremental" : (av == 1 ? "full" : "none");
    Reader reader(db);
    s.card_ticks = reader.card_tick_count();
    s.blocks = db.scalar("SELECT count(*) FROM tick_block");
    s.raw_span = reader.span();
    s.rollup_hours = db.scalar("SELECT count(*) FROM rollup_hour");
    s.rollup_span = reader.rollup_span();
    s.runs = db.scalar("SELECT count(*) FROM run");
    s.demo_runs = run_kinds(db).demo;
    s.gpus = db.scalar("SELECT count(*) FROM gpu");
    s.identities = db.scalar("SELECT count(*) FROM identity");
    s.processes = db.scalar("SELECT count(*) FROM process");
    try {
        Statement st =
            db.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, 1");
        while (st.step()) {
            s.tables.push_back(TableSize{st.text(0), st.int64(1)});
        }
    } catch (const Fatal&) {
        s.tables.clear(); // SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
    }
    db.exec("COMMIT");
    s.wal_bytes = wal_bytes(db);
    return s;
}

std::vector<std::string> check_database(Database& db) {
    std::vector<std::string> problems;
    check_readable(db);
    {
        Statement st = db.prepare("PRAGMA integrity_check");
        while (st.step()) {
            if (st.text(0) != "ok") {
                problems.push_back("integrity: " + st.text(0));
            }
        }
    }
    {
        Statement st = db.prepare("PRAGMA foreign_key_check");
        while (st.step()) {
            problems.push_back(fmt::format("foreign key: {} row {} refers to a missing {}",
                                           st.text(0), st.int64(1), st.text(2)));
        }
    }
    if (!problems.empty()) {
        return problems;
    }
    Statement blocks = db.prepare(fmt::format("SELECT {} FROM tick_block", block_columns_sql()));
    BlockRow row;
    DecodedTicks ticks;
    while (blocks.step()) {
        read_block_row(blocks, row);
        ticks.clear();
        if (!decode_block(row, ticks)) {
            problems.push_back(fmt::format("tick block {} (run {}, from {}) does not decode; "
                                           "reports leave it out",
                                           row.id, row.run_id, format_iso8601(row.t0_us)));
        }
    }
    return problems;
}

std::pair<std::int64_t, std::int64_t> vacuum_database(Database& db) {
    check_readable(db);
    const std::int64_t before = file_bytes(db.path()) + wal_bytes(db);
    if (db.scalar("PRAGMA auto_vacuum") == 2) {
        db.exec("PRAGMA incremental_vacuum");
    } else {
        // Files written before schema 3 (or by older SQLite defaults): VACUUM switches them to
        // incremental auto-vacuum, which retention needs to return space.
        db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    }
    db.exec("VACUUM");
    truncate_wal(db);
    return {before, file_bytes(db.path()) + wal_bytes(db)};
}

void backup_database(Database& db, const std::string& dest) {
    if (dest.empty()) {
        throw Fatal("backup: the destination path is empty", ExitCode::usage);
    }
    check_readable(db);
    std::error_code ec;
    if (std::filesystem::exists(dest, ec)) {
        throw Fatal(fmt::format("{} already exists; choose a new file for the backup", dest),
                    ExitCode::usage);
    }
    sqlite3* out = nullptr;
    if (sqlite3_open_v2(dest.c_str(), &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
        const std::string msg = out ? sqlite3_errmsg(out) : "out of memory";
        sqlite3_close(out);
        throw Fatal(fmt::format("cannot create {}: {}", dest, msg));
    }
    sqlite3_backup* b = sqlite3_backup_init(out, "main", db.handle(), "main");
    int rc = b == nullptr ? sqlite3_errcode(out) : SQLITE_OK;
    if (b != nullptr) {
        // A writer holding the file busy for longer than k_backup_busy_ms ends the attempt.
        constexpr int k_retry_ms = 50;
        int busy_ms = 0;
        do {
            rc = sqlite3_backup_step(b, -1);
            if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
                sqlite3_sleep(k_retry_ms);
                busy_ms += k_retry_ms;
            }
        } while (rc == SQLITE_OK ||
                 ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && busy_ms < k_backup_busy_ms));
        sqlite3_backup_finish(b);
    }
    const std::string msg = sqlite3_errmsg(out);
    sqlite3_close(out);
    if (rc != SQLITE_DONE) {
        std::filesystem::remove(dest, ec);
        throw Fatal(fmt::format("backup to {} failed: {}", dest, msg));
    }
}

} // namespace gua::store

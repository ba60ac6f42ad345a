// SPDX-License-Identifier: Apache-2.0
// gua db stats / check / vacuum / backup, on top of SQLite pragmas and the backup API.
#include "store/maintenance.hpp"

#include "alloc/allocation.hpp"
#include "core/fatal.hpp"
#include "store/db_error.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/rollup.hpp"
#include "store/run_kinds.hpp"
#include "store/schema.hpp"
#include "store/sqlite_owned.hpp"

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

/// What is wrong with the header of a block that decodes (empty: nothing): its tick count, tick
/// length and end must be those of the ticks its streams hold.
std::string header_problem(const BlockRow& row, const DecodedTicks& ticks) {
    if (row.n_ticks < 1) {
        return fmt::format("says it holds {} ticks", row.n_ticks);
    }
    if (row.tick_us <= 0) {
        return fmt::format("has a first tick of {} µs", row.tick_us);
    }
    TimeUs end = row.t0_us;
    for (const StoredCardTick& t : ticks.ticks) {
        end = std::max(end, t.t0 + t.duration_us);
    }
    if (ticks.ticks.empty() || end != row.end_us) {
        return fmt::format("ends at {} by its header but its ticks end at {}",
                           format_iso8601(row.end_us), format_iso8601(end));
    }
    return {};
}

/// A card-tick's allocation crossing must lie within its time: allocated and unknown time within
/// the duration, the allocated parts within allocated time, unused and unknown idle time within
/// its idle time without holders.
std::string allocation_problem(const DecodedTicks& ticks) {
    for (const StoredCardTick& t : ticks.ticks) {
        const telemetry::AllocationTimes& a = t.allocation;
        if (a.allocated_us + a.unknown_us > t.duration_us ||
            a.active_us + a.idle_held_us + a.unused_us > a.allocated_us ||
            a.unknown_idle_us > a.unknown_us ||
            a.unused_us + a.unknown_idle_us > t.idle_unlisted_us) {
            return fmt::format("has a card-tick at {} (gpu id {}) whose allocation times do not "
                               "fit its time; reports may misstate allocated-unused time",
                               format_iso8601(t.t0), t.gpu_id);
        }
    }
    return {};
}

void check_blocks(Database& db, std::vector<std::string>& problems) {
    Statement blocks = db.prepare(fmt::format("SELECT {} FROM tick_block", block_columns_sql()));
    BlockRow row;
    DecodedTicks ticks;
    BlockDecoder decoder;
    while (blocks.step()) {
        read_block_row(blocks, row);
        ticks.clear();
        const std::string where = fmt::format("tick block {} (run {}, from {})", row.id, row.run_id,
                                              format_iso8601(row.t0_us));
        if (!decoder.decode(row, ticks)) {
            problems.push_back(where + " does not decode; reports leave it out");
        } else if (const std::string p = header_problem(row, ticks); !p.empty()) {
            problems.push_back(fmt::format("{} {}; reports may leave its ticks out", where, p));
        } else if (const std::string a = allocation_problem(ticks); !a.empty()) {
            problems.push_back(fmt::format("{} {}", where, a));
        }
    }
}

/// Allocation spans must be non-empty and of a known kind, and two spans of one job (the
/// allocation rows `gua job` adds up: one kind, id and host) must not overlap on a card, or that
/// time counts twice (the writer extends a span or starts one, never both). Sorted by job, card
/// and start, each span is compared with the one reaching furthest before it.
void check_allocations(Database& db, std::vector<std::string>& problems) {
    Statement st = db.prepare(
        "SELECT s.id, s.allocation_id, a.kind, a.alloc_id, a.host, s.gpu_id, s.begin_us, "
        "s.end_us FROM allocation_span s JOIN allocation a ON a.id = s.allocation_id "
        "ORDER BY a.kind, a.alloc_id, a.host, s.gpu_id, s.begin_us, s.id");
    struct Reach {
        std::string job_card;
        std::int64_t span = 0;
        std::int64_t allocation = 0;
        TimeUs end = 0;
    } reach;
    while (st.step()) {
        const std::string where =
            fmt::format("allocation span {} ({} {})", st.int64(0), st.text(2), st.text(3));
        if (!alloc::parse_kind(st.text(2))) {
            problems.push_back(where + " has an unknown kind");
        }
        const TimeUs begin = st.int64(6);
        const TimeUs end = st.int64(7);
        if (end <= begin) {
            problems.push_back(fmt::format("{} ends at {}, not after its start {}", where,
                                           format_iso8601(end), format_iso8601(begin)));
            continue;
        }
        std::string job_card =
            fmt::format("{}\n{}\n{}\n{}", st.text(2), st.text(3), st.text(4), st.int64(5));
        if (job_card == reach.job_card && begin < reach.end) {
            problems.push_back(
                reach.allocation == st.int64(1)
                    ? where + " overlaps another span of the same allocation and card"
                    : fmt::format("{} overlaps span {} of the same job (allocation {}) on the "
                                  "same card; `gua job` counts that time twice",
                                  where, reach.span, reach.allocation));
        }
        if (job_card != reach.job_card || end > reach.end) {
            reach = Reach{std::move(job_card), st.int64(0), st.int64(1), end};
        }
    }
}

/// The per-job summaries (allocation_summary, kept after retention deletes raw card-ticks) must be
/// ones `gua job` can use: each card's figures come with the allocation's summarized row (its
/// range and thresholds), are non-negative, their parts fit in the allocated time, and that time
/// fits in the allocation's spans on the card (a summary adds card-ticks of its spans only).
void check_job_summaries(Database& db, std::vector<std::string>& problems) {
    Statement st = db.prepare(
        "SELECT m.allocation_id, a.kind, a.alloc_id, m.gpu_id, z.allocation_id IS NULL, "
        "m.allocated_us, m.active_us, m.idle_held_us, m.unused_us, m.measured_us, m.sm_weighted, "
        "m.peak_sm_pct, m.peak_mem_mib, m.energy_j, (SELECT coalesce(sum(s.end_us - s.begin_us), "
        "0) FROM allocation_span s WHERE s.allocation_id = m.allocation_id AND s.gpu_id = "
        "m.gpu_id) FROM allocation_summary m LEFT JOIN allocation a ON a.id = m.allocation_id "
        "LEFT JOIN allocation_summarized z ON z.allocation_id = m.allocation_id "
        "ORDER BY m.allocation_id, m.gpu_id");
    while (st.step()) {
        const std::string where = fmt::format("job summary of allocation {} ({} {}) on gpu id {}",
                                              st.int64(0), st.text(1), st.text(2), st.int64(3));
        const std::int64_t allocated = st.int64(5);
        const std::int64_t parts = st.int64(6) + st.int64(7) + st.int64(8);
        const bool negative = allocated < 0 || st.int64(6) < 0 || st.int64(7) < 0 ||
                              st.int64(8) < 0 || st.real(9) < 0 || st.real(10) < 0 ||
                              (!st.is_null(12) && st.int64(12) < 0) ||
                              (!st.is_null(13) && st.real(13) < 0);
        const bool peak_out = !st.is_null(11) && (st.real(11) < 0 || st.real(11) > 100);
        std::string p;
        if (st.int64(4) != 0) {
            p = "has no allocation_summarized row (no range, no thresholds); `gua job` ignores it";
        } else if (negative || peak_out) {
            p = "has a negative figure or a peak SM utilization outside 0–100 %";
        } else if (parts > allocated) {
            p = fmt::format("splits {} µs of allocated time into {} µs of active, idle-held and "
                            "unused time",
                            allocated, parts);
        } else if (allocated > st.int64(14)) {
            p = fmt::format("counts {} µs of allocated time but the allocation's spans on the "
                            "card last {} µs",
                            allocated, st.int64(14));
        }
        if (!p.empty()) {
            problems.push_back(fmt::format("{} {}", where, p));
        }
    }
}

/// A summarized allocation's thresholds must be ones a report can classify with.
void check_summarized(Database& db, std::vector<std::string>& problems) {
    Statement st =
        db.prepare("SELECT z.allocation_id, a.kind, a.alloc_id, z.active_util_pct, z.held_mib, "
                   "z.graphics_is_holder FROM allocation_summarized z LEFT JOIN allocation a ON "
                   "a.id = z.allocation_id WHERE NOT (z.active_util_pct BETWEEN 0 AND 100) OR "
                   "z.held_mib < 0 OR z.graphics_is_holder NOT IN (0, 1) ORDER BY z.allocation_id");
    while (st.step()) {
        problems.push_back(fmt::format(
            "job summary of allocation {} ({} {}) was classified with impossible thresholds "
            "(active above {} %, held above {} MiB, graphics holder {})",
            st.int64(0), st.text(1), st.text(2), st.real(3), st.int64(4), st.int64(5)));
    }
}

/// Every hourly rollup whose raw ticks are still there must agree with them: reports use the
/// rollup or the raw ticks depending on the window, and must give the same figures.
void check_rollups(Database& db, std::vector<std::string>& problems) {
    std::vector<std::pair<std::int64_t, audit::Thresholds>> hours;
    {
        Statement st = db.prepare(
            "SELECT hour, active_util_pct, held_mib, graphics_is_holder FROM rollup_hour "
            "ORDER BY hour");
        while (st.step()) {
            hours.push_back(
                {st.int64(0), audit::Thresholds{st.real(1), st.int64(2), st.int64(3) != 0}});
        }
    }
    RollupBuilder verifier(db);
    for (const auto& [hour, thresholds] : hours) {
        for (std::string& p : verifier.verify(hour, thresholds)) {
            problems.push_back(std::move(p));
        }
    }
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
    } catch (const DbError&) {
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
    check_blocks(db, problems);
    check_rollups(db, problems);
    check_allocations(db, problems);
    check_job_summaries(db, problems);
    check_summarized(db, problems);
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
    const std::string owned = sqlite_owned(dest);
    if (!owned.empty()) {
        throw Fatal(fmt::format("{} {}; SQLite would delete or overwrite a backup there, choose a "
                                "new file",
                                dest, owned),
                    ExitCode::usage);
    }
    std::error_code ec;
    if (std::filesystem::exists(dest, ec) || std::filesystem::is_symlink(dest, ec)) {
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

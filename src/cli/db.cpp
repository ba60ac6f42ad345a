// SPDX-License-Identifier: Apache-2.0
// `gua db stats|check|vacuum|backup FILE|upgrade`: maintenance of the database file.
#include "cli/command.hpp"
#include "config/config.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "core/units.hpp"
#include "daemon/lock.hpp"
#include "store/file_kind.hpp"
#include "store/legacy.hpp"
#include "store/maintenance.hpp"
#include "store/paths.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace gua::cli {

namespace {

struct DbOptions {
    std::string db;
    std::string config;
    std::string backup_file;
};

std::string bytes(std::int64_t n) {
    return format_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0)));
}

std::string span_text(const std::optional<std::pair<TimeUs, TimeUs>>& span) {
    if (!span) {
        return "none";
    }
    return fmt::format("{} → {} ({})", format_iso8601(span->first), format_iso8601(span->second),
                       format_duration(std::max<DurationUs>(span->second - span->first, 1)));
}

std::string resolve(const std::string& db) {
    if (!db.empty()) {
        return db;
    }
    if (const std::optional<std::string> found = store::default_read_path()) {
        return *found;
    }
    throw Fatal(fmt::format("no database found at {} or {} (pass --db PATH)", store::user_db_path(),
                            store::k_system_db_path));
}

int run_stats(const DbOptions& o) {
    store::Database db(resolve(o.db), store::OpenMode::read_only);
    const store::DbStats s = store::collect_stats(db);
    const std::int64_t file = s.page_size * s.page_count;
    fmt::print("database     {} (schema {}, auto_vacuum {})\n", db.path(), s.schema_version,
               s.auto_vacuum);
    fmt::print("size         {} ({} pages of {} B, {} free), WAL {}\n", bytes(file), s.page_count,
               s.page_size, s.freelist_pages, bytes(s.wal_bytes));
    fmt::print("raw          {} card-ticks in {} blocks{}, {}\n", s.card_ticks, s.blocks,
               s.card_ticks > 0
                   ? fmt::format(" ({:.1f} B per card-tick in the file)",
                                 static_cast<double>(file) / static_cast<double>(s.card_ticks))
                   : "",
               span_text(s.raw_span));
    fmt::print("rollups      {} hours, {}\n", s.rollup_hours, span_text(s.rollup_span));
    fmt::print("dimensions   {} runs, {} GPUs, {} identities, {} processes\n", s.runs, s.gpus,
               s.identities, s.processes);
    if (s.demo_runs > 0) {
        fmt::print("data         demo data ({} of {} runs are synthetic workloads of `gua demo`)\n",
                   s.demo_runs, s.runs);
    }
    for (const store::TableSize& t : s.tables) {
        fmt::print("  {:<28} {:>12}\n", t.name, bytes(t.bytes));
    }
    return 0;
}

int run_check(const DbOptions& o) {
    store::Database db(resolve(o.db), store::OpenMode::read_only);
    const std::vector<std::string> problems = store::check_database(db);
    if (problems.empty()) {
        fmt::print("{}: ok (integrity, foreign keys, every tick block decodes)\n", db.path());
        return 0;
    }
    for (const std::string& p : problems) {
        fmt::print("{}: {}\n", db.path(), p);
    }
    return static_cast<int>(ExitCode::failure);
}

int run_vacuum(const DbOptions& o) {
    const std::string path = resolve(o.db);
    // Identified before it is opened for writing: an empty or foreign file is refused untouched.
    const store::FileProbe probe = store::probe_file(path);
    if (probe.kind == store::FileKind::empty) {
        throw Fatal(fmt::format("{} is not a gua database (it is empty); nothing to vacuum", path));
    }
    if (probe.kind != store::FileKind::gua) {
        throw Fatal(probe.message);
    }
    store::Database db(path, store::OpenMode::read_write);
    const auto [before, after] = store::vacuum_database(db);
    fmt::print("{}: {} → {}\n", db.path(), bytes(before), bytes(after));
    return 0;
}

int run_upgrade(const DbOptions& o) {
    const std::string path = resolve(o.db);
    // Identified before the lock is taken: a missing or foreign file is refused untouched.
    const store::FileProbe probe = store::probe_file(path);
    if (probe.kind == store::FileKind::missing || probe.kind == store::FileKind::foreign) {
        throw Fatal(probe.message);
    }
    // A daemon writing the file must be stopped first.
    const daemon::DatabaseLock lock(path, daemon::IfMissing::fail);
    store::Database db(path, store::OpenMode::read_write);
    const std::int64_t before = db.scalar("PRAGMA user_version");
    store::migrate_to(db, store::k_schema_version);
    const bool legacy = store::has_legacy_ticks(db);
    // Rollups are built with the configured thresholds, as the daemon would.
    const Result<config::Config> cfg = config::load_effective_config(o.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    const std::uint64_t converted = store::convert_legacy_ticks(
        db, cfg.value().thresholds, [&](std::uint64_t done, std::uint64_t total) {
            fmt::print(stderr, "\rconverting card-ticks: {}/{}", done, total);
        });
    if (converted > 0) {
        fmt::print(stderr, "\n");
    }
    std::string space;
    // The row-per-tick tables' pages are free now, and rollup pages whose evidence BLOBs were
    // rewritten shorter are partly empty: return them.
    if (legacy || (before > 0 && before < store::k_compact_evidence_schema)) {
        const auto [was, now] = store::vacuum_database(db);
        space = fmt::format("; file {} → {}", bytes(was), bytes(now));
    }
    fmt::print("{}: schema {} → {}{}{}\n", db.path(), before, store::k_schema_version,
               converted > 0 ? fmt::format(", {} card-ticks converted to tick blocks", converted)
                             : "",
               space);
    return 0;
}

int run_backup(const DbOptions& o) {
    if (o.backup_file.empty()) {
        throw Fatal("db backup: FILE is empty; name a new file for the copy", ExitCode::usage);
    }
    store::Database db(resolve(o.db), store::OpenMode::read_only);
    store::backup_database(db, o.backup_file);
    fmt::print("{}: backed up to {}\n", db.path(), o.backup_file);
    return 0;
}

} // namespace

Runner register_db(CLI::App& app) {
    auto o = std::make_shared<DbOptions>();
    CLI::App* cmd =
        app.add_subcommand("db", "Database maintenance: stats, check, vacuum, backup, upgrade");
    cmd->require_subcommand(1);
    cmd->add_option("--db", o->db, "Database (default: the user's, else the system's)");
    CLI::App* stats = cmd->add_subcommand("stats", "Sizes, rows, time spans and WAL size");
    CLI::App* check = cmd->add_subcommand("check", "Full integrity check (exit 1 on problems)");
    CLI::App* vacuum =
        cmd->add_subcommand("vacuum", "Return free pages and rebuild the file (brief write lock)");
    CLI::App* backup =
        cmd->add_subcommand("backup", "Consistent copy to FILE, safe while the daemon runs");
    backup->add_option("FILE", o->backup_file, "New file to write")->required();
    CLI::App* upgrade = cmd->add_subcommand(
        "upgrade", "Bring a file of an older gua to the current schema (converting its ticks)");
    upgrade->add_option("--config", o->config, "gua.toml whose thresholds the rollups use");
    for (CLI::App* sub : {stats, check, vacuum, backup, upgrade}) {
        sub->add_option("--db", o->db, "Database (default: the user's, else the system's)");
    }
    return [o, stats, check, vacuum, upgrade] {
        if (stats->parsed()) {
            return run_stats(*o);
        }
        if (check->parsed()) {
            return run_check(*o);
        }
        if (vacuum->parsed()) {
            return run_vacuum(*o);
        }
        if (upgrade->parsed()) {
            return run_upgrade(*o);
        }
        return run_backup(*o);
    };
}

} // namespace gua::cli

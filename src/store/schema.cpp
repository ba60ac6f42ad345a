// SPDX-License-Identifier: Apache-2.0
// Schema migrations: versions 1 and 2 as C++, then one frozen SQL file per version
// (src/store/migrations/v<N>.sql, built in by CMake), some followed by a C++ step listed here.
// None reads the live stream list or view code. Documented for administrators in docs/schema.md.
#include "store/schema.hpp"

#include "core/fatal.hpp"
#include "store/evidence.hpp"
#include "store/frozen_sql.hpp"
#include "store/legacy.hpp"
#include "store/schema_policy.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>

namespace gua::store {

namespace {

// Version 1: one row per card-tick and per process-tick (superseded by version 3).
constexpr std::string_view k_v1 = R"sql(
CREATE TABLE run (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    driver_version TEXT NOT NULL,
    source TEXT NOT NULL,
    gua_version TEXT NOT NULL,
    interval_us INTEGER NOT NULL,
    active_threshold_pct REAL NOT NULL,
    started_us INTEGER NOT NULL,
    ended_us INTEGER
);
CREATE TABLE gpu (
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    memory_total_mib INTEGER,
    pci_bus_id TEXT NOT NULL DEFAULT '',
    parent_uuid TEXT NOT NULL DEFAULT ''
);
CREATE TABLE identity (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    uid INTEGER,
    container_id TEXT NOT NULL DEFAULT '',
    pod_uid TEXT NOT NULL DEFAULT '',
    slurm_job TEXT NOT NULL DEFAULT '',
    systemd_unit TEXT NOT NULL DEFAULT '',
    jupyter_kernel TEXT NOT NULL DEFAULT '',
    UNIQUE (user, uid, container_id, pod_uid, slurm_job, systemd_unit, jupyter_kernel)
);
CREATE TABLE process (
    id INTEGER PRIMARY KEY,
    pid INTEGER NOT NULL,
    start_ticks INTEGER,
    command TEXT NOT NULL DEFAULT '',
    identity_id INTEGER NOT NULL REFERENCES identity(id),
    UNIQUE (pid, start_ticks, command, identity_id)
);
CREATE TABLE card_tick (
    t0_us INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL REFERENCES gpu(id),
    run_id INTEGER NOT NULL REFERENCES run(id),
    duration_us INTEGER NOT NULL,
    util_source INTEGER NOT NULL,
    util_pct REAL,
    active_us INTEGER,
    idle_us INTEGER NOT NULL DEFAULT 0,
    underutilized_us INTEGER NOT NULL DEFAULT 0,
    productive_us INTEGER NOT NULL DEFAULT 0,
    compute_bound_us INTEGER NOT NULL DEFAULT 0,
    mem_util_pct INTEGER,
    mem_used_mib INTEGER,
    power_mw INTEGER,
    temperature_c INTEGER,
    sm_clock_mhz INTEGER,
    clock_events INTEGER,
    read_errors INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (t0_us, gpu_id)
) WITHOUT ROWID;
CREATE TABLE proc_tick (
    t0_us INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    process_id INTEGER NOT NULL REFERENCES process(id),
    type INTEGER NOT NULL,
    mem_used_mib INTEGER,
    sm_util_pct REAL,
    PRIMARY KEY (t0_us, gpu_id, process_id)
) WITHOUT ROWID;

CREATE VIEW card_tick_state AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', c.t0_us / 1000000, 'unixepoch') AS start_utc,
       g.idx AS gpu, g.uuid AS uuid, g.name AS model,
       c.duration_us / 1e6 AS seconds,
       c.util_pct AS util_pct,
       h.held_mib AS held_mib,
       c.active_us / 1e6 AS active_s,
       CASE WHEN c.active_us IS NULL THEN NULL
            WHEN h.held_mib > 100 THEN (c.duration_us - c.active_us) / 1e6 ELSE 0 END
           AS idle_held_s,
       CASE WHEN c.active_us IS NULL THEN NULL
            WHEN h.held_mib > 100 THEN 0 ELSE (c.duration_us - c.active_us) / 1e6 END
           AS truly_idle_s,
       CASE WHEN c.active_us IS NULL THEN 'n/a'
            WHEN c.active_us * 2 >= c.duration_us THEN 'active'
            WHEN h.held_mib > 100 THEN 'idle-held' ELSE 'truly-idle' END AS state,
       c.mem_used_mib, c.power_mw / 1000.0 AS power_w, c.temperature_c, c.sm_clock_mhz
FROM card_tick c
JOIN gpu g ON g.id = c.gpu_id
JOIN (SELECT c2.t0_us, c2.gpu_id,
             COALESCE(SUM(CASE WHEN p.type IN (0, 2) THEN COALESCE(p.mem_used_mib, 101) END), 0)
                 AS held_mib
      FROM card_tick c2 LEFT JOIN proc_tick p ON p.t0_us = c2.t0_us AND p.gpu_id = c2.gpu_id
      GROUP BY c2.t0_us, c2.gpu_id) h ON h.t0_us = c.t0_us AND h.gpu_id = c.gpu_id;

CREATE VIEW process_tick AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', p.t0_us / 1000000, 'unixepoch') AS start_utc,
       g.idx AS gpu, g.uuid AS uuid, pr.pid, i.user, pr.command,
       CASE p.type WHEN 0 THEN 'compute' WHEN 1 THEN 'graphics' ELSE 'mps' END AS type,
       p.mem_used_mib, p.sm_util_pct,
       i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel
FROM proc_tick p
JOIN gpu g ON g.id = p.gpu_id
JOIN process pr ON pr.id = p.process_id
JOIN identity i ON i.id = pr.identity_id;
)sql";

void v1(Database& db) {
    db.exec(k_v1);
}

void v2(Database& db) {
    db.exec(k_policy_migration);
}

// After v3.sql: renamed row-per-tick tables with rows are converted after the migrations
// (convert_legacy_ticks: many transactions, resumable); empty ones (a new file) go now.
void after_v3(Database& db) {
    if (db.scalar("SELECT count(*) FROM (SELECT 1 FROM legacy_card_tick LIMIT 1)") == 0) {
        db.exec("DROP TABLE legacy_proc_tick; DROP TABLE legacy_card_tick;");
    }
}

using Recode = std::string (*)(std::string_view);

/// The SQL function gua_recode(blob): the BLOB's bytes through the Recode its user data points to.
void recode_sql(sqlite3_context* context, int, sqlite3_value** args) {
    const Recode recode = *static_cast<const Recode*>(sqlite3_user_data(context));
    const auto* bytes = static_cast<const char*>(sqlite3_value_blob(args[0]));
    try {
        const std::string out = recode(std::string_view(
            bytes == nullptr ? "" : bytes, static_cast<std::size_t>(sqlite3_value_bytes(args[0]))));
        sqlite3_result_blob64(context, out.data(), out.size(), SQLITE_TRANSIENT);
    } catch (const std::bad_alloc&) {
        sqlite3_result_error_nomem(context);
    }
}

/// Rewrites every non-empty `evidence` BLOB of `table` with `recode`.
void recode_evidence_of(Database& db, std::string_view table, Recode recode) {
    struct Registered { // gua_recode exists while `recode` does
        sqlite3* db;
        ~Registered() {
            sqlite3_create_function_v2(db, "gua_recode", 1, SQLITE_UTF8, nullptr, nullptr, nullptr,
                                       nullptr, nullptr);
        }
    };
    const int rc =
        sqlite3_create_function_v2(db.handle(), "gua_recode", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                   &recode, recode_sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
        throw Fatal(fmt::format("{}: cannot upgrade the rollups' evidence: {}", db.path(),
                                sqlite3_errstr(rc)));
    }
    const Registered registered{db.handle()};
    db.exec(fmt::format("UPDATE {} SET evidence = gua_recode(evidence) WHERE length(evidence) > 0",
                        table));
}

// After v9.sql (no new table or column): the rollups' evidence BLOBs take the compact format
// (store/evidence.hpp: varints, repeated values stored once), rewritten here without changing a
// value. The decoder still reads the format before it.
void after_v9(Database& db) {
    recode_evidence_of(db, "rollup_gpu", recode_evidence);
    recode_evidence_of(db, "rollup_day_gpu", recode_evidence);
    recode_evidence_of(db, "rollup_identity", recode_identity_evidence);
    recode_evidence_of(db, "rollup_day_identity", recode_identity_evidence);
}

using Migration = void (*)(Database&);

/// The versions before the first migration file, as C++.
constexpr std::array<Migration, 2> k_early_migrations{v1, v2};
static_assert(k_early_migrations.size() + 1 == k_first_migration_file);

/// C++ steps that run after a migration file's SQL, in the same transaction.
struct AfterStep {
    std::int64_t version;
    Migration step;
};
constexpr std::array<AfterStep, 2> k_after_steps{{{3, after_v3}, {9, after_v9}}};

/// Runs migration `version` (1 ≤ version ≤ k_schema_version).
void run_migration(Database& db, std::int64_t version) {
    if (version < k_first_migration_file) {
        k_early_migrations[static_cast<std::size_t>(version - 1)](db);
        return;
    }
    db.exec(frozen_sql(version));
    for (const AfterStep& after : k_after_steps) {
        if (after.version == version) {
            after.step(db);
        }
    }
}

void check_identity(Database& db, std::int64_t version) {
    const std::int64_t app = db.scalar("PRAGMA application_id");
    const bool empty = db.scalar("SELECT count(*) FROM sqlite_schema") == 0;
    if (app != k_application_id && !(app == 0 && version == 0 && empty)) {
        throw Fatal(not_gua_message(db.path(), app));
    }
    if (version > k_schema_version) {
        throw Fatal(fmt::format("{} has schema version {}, newer than this gua understands ({}); "
                                "upgrade gua",
                                db.path(), version, k_schema_version));
    }
}

/// The one message for a file that needs `gua db upgrade` (reports, demo and import say the same).
[[noreturn]] void refuse_older(const Database& db) {
    throw Fatal(fmt::format("{} was written by an older gua; `gua db upgrade --db {}` converts it "
                            "(the daemon also does when it starts)",
                            db.path(), db.path()));
}

} // namespace

void migrate(Database& db) {
    migrate_to(db, k_schema_version);
    if (has_legacy_ticks(db)) { // converting needs the daemon lock: the daemon or `gua db upgrade`
        refuse_older(db);
    }
}

void migrate_to(Database& db, std::int64_t target) {
    std::int64_t version = db.scalar("PRAGMA user_version");
    check_identity(db, version);
    const std::string_view current = current_schema_sql();
    if (version == 0 && target >= k_schema_version && !current.empty() &&
        db.scalar("SELECT count(*) FROM sqlite_schema") == 0) {
        // A new file gets what the migrations would make of it in one step: each ALTER TABLE
        // has SQLite parse the whole schema again (about 100 MB of allocations and 0.1 s for
        // all ten versions, many times that under a loaded or instrumented run).
        Transaction tx(db);
        db.exec(current);
        db.exec(fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};",
                            k_schema_version, k_application_id));
        tx.commit();
        return;
    }
    while (version < std::min(target, k_schema_version)) {
        Transaction tx(db);
        ++version;
        run_migration(db, version);
        db.exec(fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};", version,
                            k_application_id));
        tx.commit();
    }
}

void check_readable(Database& db) {
    const std::int64_t version = db.scalar("PRAGMA user_version");
    check_identity(db, version);
    if (version == 0) {
        throw Fatal(fmt::format("{} is an empty database (no gua data recorded yet)", db.path()));
    }
    if (version < k_schema_version || has_legacy_ticks(db)) {
        refuse_older(db);
    }
}

} // namespace gua::store

namespace gua::store {

std::string schema_sql_of(Database& db) {
    std::string out = fmt::format(
        "-- The schema of a new gua database (version {}), made in one step: what the migrations\n"
        "-- (src/store/schema.cpp, src/store/migrations/v*.sql) leave in sqlite_schema, in the "
        "order\n-- they made it. Generated at build time by "
        "src/store/migrations/make_current.cpp.\n",
        db.scalar("PRAGMA user_version"));
    Statement st = db.prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT "
                              "LIKE 'sqlite_%' ORDER BY rowid");
    while (st.step()) {
        out += st.text(0) + ";\n";
    }
    return out;
}

} // namespace gua::store

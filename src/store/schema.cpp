// Schema migrations, listed by hand in order. Documented for administrators in docs/schema.md.
#include "store/schema.hpp"

#include "core/fatal.hpp"
#include "store/block.hpp"
#include "store/views.hpp"

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>

namespace gua::store {

namespace {

constexpr std::string_view k_v1_tables = R"sql(
CREATE TABLE run (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    driver_version TEXT NOT NULL,
    source TEXT NOT NULL,
    gua_version TEXT NOT NULL,
    interval_us INTEGER NOT NULL,
    active_threshold_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL DEFAULT 100,
    graphics_is_holder INTEGER NOT NULL DEFAULT 0,
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
CREATE TABLE rollup_hour (
    hour INTEGER PRIMARY KEY,
    active_util_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL,
    graphics_is_holder INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    first_t0_us INTEGER NOT NULL,
    first_duration_us INTEGER NOT NULL,
    last_end_us INTEGER NOT NULL,
    gaps TEXT
);
CREATE TABLE rollup_day (
    day INTEGER PRIMARY KEY,
    hours INTEGER NOT NULL,
    active_util_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL,
    graphics_is_holder INTEGER NOT NULL
);
CREATE TABLE rollup_day_gpu (
    day INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    idle_us INTEGER NOT NULL,
    underutilized_us INTEGER NOT NULL,
    productive_us INTEGER NOT NULL,
    compute_bound_us INTEGER NOT NULL,
    PRIMARY KEY (day, gpu_id)
) WITHOUT ROWID;
CREATE TABLE rollup_day_identity (
    day INTEGER NOT NULL,
    identity_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    idle_held_mib_ms INTEGER NOT NULL,
    PRIMARY KEY (day, identity_id)
) WITHOUT ROWID;
CREATE TABLE rollup_gpu (
    hour INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    idle_us INTEGER NOT NULL,
    underutilized_us INTEGER NOT NULL,
    productive_us INTEGER NOT NULL,
    compute_bound_us INTEGER NOT NULL,
    first_t0_us INTEGER NOT NULL,
    first_duration_us INTEGER NOT NULL,
    last_end_us INTEGER NOT NULL,
    gaps TEXT,
    PRIMARY KEY (hour, gpu_id)
) WITHOUT ROWID;
CREATE TABLE rollup_identity (
    hour INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    identity_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    idle_held_mib_ms INTEGER NOT NULL,
    PRIMARY KEY (hour, gpu_id, identity_id)
) WITHOUT ROWID;
)sql";

std::string v1() {
    std::string streams;
    for (std::string_view column : k_stream_columns) {
        streams += fmt::format(",\n    {} TEXT", column);
    }
    return std::string(k_v1_tables) +
           fmt::format(R"sql(
CREATE TABLE tick_block (
    id INTEGER PRIMARY KEY,
    t0_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    run_id INTEGER NOT NULL REFERENCES run(id),
    n_ticks INTEGER NOT NULL,
    tick_us INTEGER NOT NULL,
    cards TEXT NOT NULL,
    procs TEXT NOT NULL{}
);
CREATE INDEX tick_block_t0 ON tick_block (t0_us);
)sql",
                       streams) +
           views_v1_sql();
}

using Migration = std::string (*)();
constexpr std::array<Migration, 1> k_migrations{v1};
static_assert(k_migrations.size() == k_schema_version);

void check_identity(Database& db, std::int64_t version) {
    const std::int64_t app = db.scalar("PRAGMA application_id");
    if (app != k_application_id && !(app == 0 && version == 0)) {
        throw Fatal(fmt::format("{} is not a gua database (application_id {:#x})", db.path(), app));
    }
    if (version > k_schema_version) {
        throw Fatal(fmt::format("{} has schema version {}, newer than this gua understands ({}); "
                                "upgrade gua",
                                db.path(), version, k_schema_version));
    }
}

} // namespace

void migrate(Database& db) {
    std::int64_t version = db.scalar("PRAGMA user_version");
    const bool empty = db.scalar("SELECT count(*) FROM sqlite_schema") == 0;
    if (version == 0 && !empty && db.scalar("PRAGMA application_id") != k_application_id) {
        throw Fatal(fmt::format("{} is not a gua database (it has other tables; to bring in a "
                                "gpu-usage-audit database use `gua import`)",
                                db.path()));
    }
    check_identity(db, version);
    while (version < k_schema_version) {
        Transaction tx(db);
        db.exec(k_migrations[static_cast<std::size_t>(version)]());
        ++version;
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
}

} // namespace gua::store

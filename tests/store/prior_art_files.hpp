// SPDX-License-Identifier: Apache-2.0
// Builds gpu-usage-audit databases of each schema version with plain SQL, as gpu-usage-audit's own
// code (and its migrations) would have left them, filled with a deterministic workload.
#pragma once

#include "core/time.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gua::testing {

/// gpu-usage-audit versions whose file layouts differ.
enum class PriorVersion { v0_4, v1_0_3, v1_1_migrated, v1_4_migrated, v1_8_fresh };

/// Python's datetime.isoformat() of an aware UTC time: the fraction is left out when zero.
inline std::string isoformat(TimeUs t) {
    const std::time_t secs = static_cast<std::time_t>(t / k_us_per_second);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::string s = buf;
    if (const std::int64_t us = t % k_us_per_second; us != 0) {
        char frac[16];
        std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(us));
        s += frac;
    }
    return s + "+00:00";
}

/// A gpu-usage-audit SQLite file being built.
class PriorArtDb {
  public:
    PriorArtDb(const std::string& path, PriorVersion version)
        : m_version(version),
          m_level(version == PriorVersion::v1_8_fresh ? version : PriorVersion::v0_4) {
        if (sqlite3_open(path.c_str(), &m_db) != SQLITE_OK) {
            throw std::runtime_error("cannot create " + path);
        }
        exec("PRAGMA journal_mode=WAL");
        exec(R"sql(CREATE TABLE host (hostname TEXT NOT NULL, env_kind TEXT NOT NULL,
                 driver_version TEXT, first_seen DATETIME NOT NULL, last_seen DATETIME NOT NULL))sql");
        if (version == PriorVersion::v1_8_fresh) {
            exec(R"sql(CREATE TABLE daemon_run (id INTEGER PRIMARY KEY AUTOINCREMENT,
                     started_at DATETIME NOT NULL, interval_seconds REAL NOT NULL);
                CREATE TABLE gpu_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL,
                     util_pct INTEGER NOT NULL, run_id INTEGER REFERENCES daemon_run(id),
                     usage_state TEXT, gpu_index INTEGER, memory_used_mb INTEGER,
                     temperature_c INTEGER, power_w INTEGER);
                CREATE TABLE proc_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL,
                     pid INTEGER NOT NULL, mem_used_mb INTEGER, loginuid_user TEXT,
                     run_id INTEGER REFERENCES daemon_run(id), gpu_index INTEGER,
                     process_name TEXT, process_type TEXT NOT NULL DEFAULT 'compute');
                CREATE TABLE gpu_device (gpu_uuid TEXT NOT NULL, name TEXT NOT NULL,
                     memory_total_mb INTEGER NOT NULL, first_seen DATETIME NOT NULL,
                     last_seen DATETIME NOT NULL);
                CREATE UNIQUE INDEX idx_gpu_device_uuid ON gpu_device(gpu_uuid);)sql");
        } else {
            exec(R"sql(CREATE TABLE gpu_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL,
                     util_pct INTEGER NOT NULL);
                CREATE TABLE proc_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL,
                     pid INTEGER NOT NULL, mem_used_mb INTEGER NOT NULL, loginuid_user TEXT);)sql");
        }
        exec("CREATE INDEX idx_gpu_sample_uuid_ts ON gpu_sample(gpu_uuid, ts);"
             "CREATE INDEX idx_proc_sample_uuid_ts ON proc_sample(gpu_uuid, ts);");
    }
    ~PriorArtDb() { sqlite3_close(m_db); }
    PriorArtDb(const PriorArtDb&) = delete;
    PriorArtDb& operator=(const PriorArtDb&) = delete;

    /// Applies the additive migrations of versions after v0.4 that this file's version has
    /// (rows written before keep NULL in new columns, as in real upgraded files).
    void upgrade() {
        if (m_version == PriorVersion::v0_4 || m_version == PriorVersion::v1_8_fresh) {
            return;
        }
        m_level = m_version;
        exec(R"sql(CREATE TABLE daemon_run (id INTEGER PRIMARY KEY AUTOINCREMENT,
                 started_at DATETIME NOT NULL, interval_seconds REAL NOT NULL);
            ALTER TABLE gpu_sample ADD COLUMN run_id INTEGER REFERENCES daemon_run(id);
            ALTER TABLE proc_sample ADD COLUMN run_id INTEGER REFERENCES daemon_run(id);)sql");
        if (m_version == PriorVersion::v1_0_3) {
            return;
        }
        exec(R"sql(ALTER TABLE gpu_sample ADD COLUMN gpu_index INTEGER;
            ALTER TABLE gpu_sample ADD COLUMN memory_used_mb INTEGER;
            ALTER TABLE gpu_sample ADD COLUMN temperature_c INTEGER;
            ALTER TABLE gpu_sample ADD COLUMN power_w INTEGER;
            ALTER TABLE proc_sample ADD COLUMN gpu_index INTEGER;
            ALTER TABLE proc_sample ADD COLUMN process_name TEXT;
            CREATE TABLE gpu_device (gpu_uuid TEXT NOT NULL, name TEXT NOT NULL,
                 memory_total_mb INTEGER NOT NULL, first_seen DATETIME NOT NULL,
                 last_seen DATETIME NOT NULL);
            CREATE UNIQUE INDEX idx_gpu_device_uuid ON gpu_device(gpu_uuid);)sql");
        if (m_version == PriorVersion::v1_1_migrated) {
            return;
        }
        exec(R"sql(ALTER TABLE proc_sample RENAME TO proc_sample_legacy;
            CREATE TABLE proc_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL,
                 pid INTEGER NOT NULL, mem_used_mb INTEGER, loginuid_user TEXT,
                 run_id INTEGER REFERENCES daemon_run(id), gpu_index INTEGER, process_name TEXT,
                 process_type TEXT NOT NULL DEFAULT 'compute');
            INSERT INTO proc_sample (ts, gpu_uuid, pid, mem_used_mb, loginuid_user, run_id,
                 gpu_index, process_name)
                 SELECT ts, gpu_uuid, pid, mem_used_mb, loginuid_user, run_id, gpu_index,
                        process_name FROM proc_sample_legacy;
            DROP TABLE proc_sample_legacy;
            DROP INDEX IF EXISTS idx_proc_sample_uuid_ts;
            CREATE INDEX idx_proc_sample_uuid_ts ON proc_sample(gpu_uuid, ts);
            ALTER TABLE gpu_sample ADD COLUMN usage_state TEXT;)sql");
    }

    /// What the file has at this point (migrated files gain columns in upgrade()).
    bool has_runs() const { return m_level != PriorVersion::v0_4; }
    bool has_extra() const {
        return m_level != PriorVersion::v0_4 && m_level != PriorVersion::v1_0_3;
    }
    bool has_types() const {
        return m_level == PriorVersion::v1_4_migrated || m_level == PriorVersion::v1_8_fresh;
    }

    /// Adds a daemon_run row; returns its id.
    std::int64_t add_run(TimeUs started, double interval_seconds) {
        exec("INSERT INTO daemon_run (started_at, interval_seconds) VALUES ('" +
             isoformat(started) + "', " + std::to_string(interval_seconds) + ")");
        return sqlite3_last_insert_rowid(m_db);
    }

    void add_host(const std::string& name) {
        exec("INSERT INTO host VALUES ('" + name + "', 'bare', '550.54', '" + isoformat(0) +
             "', '" + isoformat(0) + "')");
    }

    void add_device(const std::string& uuid, const std::string& name) {
        exec("INSERT INTO gpu_device VALUES ('" + uuid + "', '" + name + "', 81920, '" +
             isoformat(0) + "', '" + isoformat(0) + "')");
    }

    void add_gpu(const std::string& ts, const std::string& uuid, int util,
                 std::optional<std::int64_t> run, int index) {
        std::string sql;
        if (has_extra()) {
            sql = "INSERT INTO gpu_sample (ts, gpu_uuid, util_pct, run_id, gpu_index, "
                  "memory_used_mb, temperature_c, power_w) VALUES ('" +
                  ts + "', '" + uuid + "', " + std::to_string(util) + ", " + opt(run) + ", " +
                  std::to_string(index) + ", 1234, 55, 300)";
        } else if (has_runs()) {
            sql = "INSERT INTO gpu_sample (ts, gpu_uuid, util_pct, run_id) VALUES ('" + ts +
                  "', '" + uuid + "', " + std::to_string(util) + ", " + opt(run) + ")";
        } else {
            sql = "INSERT INTO gpu_sample VALUES ('" + ts + "', '" + uuid + "', " +
                  std::to_string(util) + ")";
        }
        exec(sql);
    }

    void add_proc(const std::string& ts, const std::string& uuid, int pid,
                  std::optional<std::int64_t> mem, const std::optional<std::string>& user,
                  std::optional<std::int64_t> run, const std::string& type = "compute") {
        const std::string u = user ? "'" + *user + "'" : "NULL";
        std::string sql;
        if (has_types()) {
            sql = "INSERT INTO proc_sample (ts, gpu_uuid, pid, mem_used_mb, loginuid_user, "
                  "run_id, process_name, process_type) VALUES ('" +
                  ts + "', '" + uuid + "', " + std::to_string(pid) + ", " + opt(mem) + ", " + u +
                  ", " + opt(run) + ", 'python3', '" + type + "')";
        } else if (has_extra()) {
            sql = "INSERT INTO proc_sample (ts, gpu_uuid, pid, mem_used_mb, loginuid_user, "
                  "run_id, process_name) VALUES ('" +
                  ts + "', '" + uuid + "', " + std::to_string(pid) + ", " + opt(mem) + ", " + u +
                  ", " + opt(run) + ", 'python3')";
        } else if (has_runs()) {
            sql = "INSERT INTO proc_sample (ts, gpu_uuid, pid, mem_used_mb, loginuid_user, "
                  "run_id) VALUES ('" +
                  ts + "', '" + uuid + "', " + std::to_string(pid) + ", " + opt(mem) + ", " + u +
                  ", " + opt(run) + ")";
        } else {
            sql = "INSERT INTO proc_sample VALUES ('" + ts + "', '" + uuid + "', " +
                  std::to_string(pid) + ", " + opt(mem) + ", " + u + ")";
        }
        exec(sql);
    }

    void exec(const std::string& sql) {
        char* err = nullptr;
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            const std::string msg = err != nullptr ? err : "?";
            sqlite3_free(err);
            throw std::runtime_error(msg + " in " + sql);
        }
    }

  private:
    static std::string opt(std::optional<std::int64_t> v) {
        return v ? std::to_string(*v) : "NULL";
    }

    sqlite3* m_db = nullptr;
    PriorVersion m_version;
    PriorVersion m_level;
};

/// gpu-usage-audit's reference-like workload on `gpus` cards: jobs that run, idle-held tails, free
/// spells; 1–3 processes of one user per job, sometimes an unresolved one. `run` is the run id
/// of every row (nullopt: none).
inline void fill_workload(PriorArtDb& db, int gpus, int ticks, TimeUs start, DurationUs interval,
                          std::optional<std::int64_t> run, std::uint64_t seed,
                          bool with_jitter = true) {
    std::mt19937_64 rng(seed);
    const std::vector<std::string> users{"alice", "bob", "carol"};
    db.exec("BEGIN");
    for (int g = 0; g < gpus; ++g) {
        const std::string uuid = "GPU-" + std::to_string(g) + "f3c2a1b-1111-2222-3333-444455556666";
        int phase = 0; // 0 free, 1 run, 2 hold
        int left = 0;
        int user = 0;
        int procs = 1;
        for (int n = 0; n < ticks; ++n) {
            if (left-- <= 0) {
                phase = (phase + 1) % 3;
                left = 5 + static_cast<int>(rng() % 40);
                user = static_cast<int>(rng() % 4);
                procs = 1 + static_cast<int>(rng() % 3);
            }
            const TimeUs jitter =
                with_jitter && rng() % 3 != 0 ? static_cast<TimeUs>(rng() % 900000) : 0;
            const std::string ts = isoformat(start + n * interval + jitter);
            const int util = phase == 1 ? 10 + static_cast<int>(rng() % 90)
                                        : (phase == 2 ? static_cast<int>(rng() % 12) : 0);
            db.add_gpu(ts, uuid, util, run, g);
            if (phase != 0) {
                for (int p = 0; p < procs; ++p) {
                    const std::optional<std::string> who =
                        user == 3
                            ? std::nullopt
                            : std::optional<std::string>(users[static_cast<std::size_t>(user)]);
                    db.add_proc(ts, uuid, 1000 + g * 10 + p, p == 0 ? 8000 : 60, who, run);
                }
            }
        }
    }
    db.exec("COMMIT");
}

} // namespace gua::testing

// SPDX-License-Identifier: Apache-2.0
// gpu-usage-audit files: schema detection from PRAGMA table_info, per-GPU cursors over the
// (gpu_uuid, ts) index merged with their process rows, and interval inference.
#include "store/prior_art.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace gua::store {

namespace {

std::set<std::string> columns_of(Database& db, const std::string& table) {
    std::set<std::string> out;
    Statement st = db.prepare(fmt::format("PRAGMA table_info({})", table));
    while (st.step()) {
        out.insert(st.text(1));
    }
    return out;
}

std::string column_or_null(const std::set<std::string>& columns, const std::string& name) {
    return columns.contains(name) ? name : "NULL";
}

/// Scheduling jitter aside, intervals are configured round values: the nearest second (100 ms
/// below 10 s, 1 ms below 1 s).
DurationUs round_interval(DurationUs us) {
    const DurationUs unit = us >= 10 * k_us_per_second ? k_us_per_second
                            : us >= k_us_per_second    ? 100 * k_us_per_ms
                                                       : k_us_per_ms;
    return std::max(unit, (us + unit / 2) / unit * unit);
}

} // namespace

std::string PriorSchema::version() const {
    if (process_type) {
        return "1.4";
    }
    if (card_fields || process_name || gpu_device) {
        return "1.1";
    }
    if (daemon_run || run_id) {
        return "1.0.3";
    }
    return "0.4";
}

TimeUs parse_prior_timestamp(const std::string& text, const std::string& path) {
    const Result<TimeUs> t = parse_iso8601(text);
    if (!t) {
        throw Fatal(
            fmt::format("{}: unreadable timestamp '{}' in gpu-usage-audit data", path, text));
    }
    return t.value();
}

PriorArtFile::PriorArtFile(const std::string& path) : m_db(path, OpenMode::read_only) {
    std::set<std::string> gpu_columns;
    std::set<std::string> proc_columns;
    try {
        gpu_columns = columns_of(m_db, "gpu_sample");
        proc_columns = columns_of(m_db, "proc_sample");
    } catch (const Fatal&) {
        throw Fatal(fmt::format("{} is not an SQLite database", path), ExitCode::usage);
    }
    for (const char* c : {"ts", "gpu_uuid", "util_pct"}) {
        if (!gpu_columns.contains(c)) {
            throw Fatal(
                fmt::format("{} is not a gpu-usage-audit database (no gpu_sample.{})", path, c),
                ExitCode::usage);
        }
    }
    for (const char* c : {"ts", "gpu_uuid", "pid", "mem_used_mb", "loginuid_user"}) {
        if (!proc_columns.contains(c)) {
            throw Fatal(
                fmt::format("{} is not a gpu-usage-audit database (no proc_sample.{})", path, c),
                ExitCode::usage);
        }
    }
    const std::set<std::string> run_columns = columns_of(m_db, "daemon_run");
    m_schema.daemon_run = run_columns.contains("interval_seconds");
    m_schema.run_id = gpu_columns.contains("run_id");
    m_schema.card_fields = gpu_columns.contains("gpu_index");
    m_schema.process_name = proc_columns.contains("process_name");
    m_schema.process_type = proc_columns.contains("process_type");
    m_schema.gpu_device = columns_of(m_db, "gpu_device").contains("gpu_uuid");
    m_sample_sql = fmt::format(
        "SELECT ts, util_pct, {}, {}, {}, {}, {} FROM gpu_sample WHERE gpu_uuid = ? ORDER BY ts",
        column_or_null(gpu_columns, "run_id"), column_or_null(gpu_columns, "gpu_index"),
        column_or_null(gpu_columns, "memory_used_mb"), column_or_null(gpu_columns, "temperature_c"),
        column_or_null(gpu_columns, "power_w"));
    m_proc_sql = fmt::format("SELECT ts, pid, mem_used_mb, loginuid_user, {}, {} FROM proc_sample "
                             "WHERE gpu_uuid = ? ORDER BY ts",
                             column_or_null(proc_columns, "process_name"),
                             column_or_null(proc_columns, "process_type"));
}

std::pair<std::string, std::string> PriorArtFile::host() {
    if (columns_of(m_db, "host").empty()) {
        return {};
    }
    Statement st = m_db.prepare("SELECT hostname, driver_version FROM host LIMIT 1");
    if (!st.step()) {
        return {};
    }
    return {st.text(0), st.text(1)};
}

std::vector<std::string> PriorArtFile::gpu_uuids() {
    std::vector<std::string> out;
    Statement st = m_db.prepare("SELECT DISTINCT gpu_uuid FROM gpu_sample ORDER BY gpu_uuid");
    while (st.step()) {
        out.push_back(st.text(0));
    }
    return out;
}

std::map<std::int64_t, PriorRun> PriorArtFile::runs() {
    std::map<std::int64_t, PriorRun> out;
    if (!m_schema.daemon_run) {
        return out;
    }
    Statement st = m_db.prepare("SELECT id, started_at, interval_seconds FROM daemon_run");
    while (st.step()) {
        const double seconds = st.real(2);
        if (!std::isfinite(seconds) || seconds <= 0) {
            continue;
        }
        out[st.int64(0)] =
            PriorRun{parse_prior_timestamp(st.text(1), m_db.path()), std::llround(seconds * 1e6)};
    }
    return out;
}

std::map<std::string, PriorDevice> PriorArtFile::devices() {
    std::map<std::string, PriorDevice> out;
    if (!m_schema.gpu_device) {
        return out;
    }
    Statement st = m_db.prepare("SELECT gpu_uuid, name, memory_total_mb FROM gpu_device");
    while (st.step()) {
        out[st.text(0)] = PriorDevice{st.text(1), st.opt_int64(2)};
    }
    return out;
}

std::uint64_t PriorArtFile::sample_count() {
    return static_cast<std::uint64_t>(m_db.scalar("SELECT count(*) FROM gpu_sample"));
}

std::map<std::string, DurationUs> PriorArtFile::inferred_intervals() {
    std::string where;
    if (m_schema.run_id && m_schema.daemon_run) {
        where = " WHERE run_id IS NULL OR run_id NOT IN (SELECT id FROM daemon_run WHERE "
                "interval_seconds > 0)";
    }
    Statement st = m_db.prepare(
        fmt::format("SELECT gpu_uuid, ts FROM gpu_sample{} ORDER BY gpu_uuid, ts", where));
    std::map<std::string, DurationUs> out;
    std::string uuid;
    std::vector<DurationUs> diffs;
    std::optional<TimeUs> prev;
    const auto flush = [&] {
        if (!diffs.empty()) {
            std::nth_element(diffs.begin(), diffs.begin() + static_cast<long>(diffs.size() / 2),
                             diffs.end());
            out[uuid] = round_interval(diffs[diffs.size() / 2]);
        }
        diffs.clear();
        prev.reset();
    };
    while (st.step()) {
        if (st.text(0) != uuid) {
            flush();
            uuid = st.text(0);
        }
        const TimeUs t = parse_prior_timestamp(st.text(1), m_db.path());
        if (prev && t > *prev) {
            diffs.push_back(t - *prev);
        }
        prev = t;
    }
    flush();
    return out;
}

PriorArtFile::Cursor::Cursor(Database& db, const std::string& sample_sql,
                             const std::string& proc_sql, const std::string& uuid)
    : m_db(&db), m_samples(db.prepare(sample_sql)), m_procs(db.prepare(proc_sql)), m_uuid(uuid) {
    m_samples.bind(1, std::string_view(m_uuid));
    m_procs.bind(1, std::string_view(m_uuid));
    m_have_proc = m_procs.step();
}

PriorArtFile::Cursor PriorArtFile::cursor(const std::string& uuid) {
    return Cursor(m_db, m_sample_sql, m_proc_sql, uuid);
}

bool PriorArtFile::Cursor::next(PriorSample& s, std::vector<PriorProcess>& processes) {
    if (!m_samples.step()) {
        return false;
    }
    s.ts = m_samples.text(0);
    s.t0 = parse_prior_timestamp(s.ts, m_db->path());
    s.uuid = m_uuid;
    s.util_pct = m_samples.int64(1);
    s.run_id = m_samples.opt_int64(2);
    s.gpu_index = m_samples.opt_int64(3);
    s.memory_used_mb = m_samples.opt_int64(4);
    s.temperature_c = m_samples.opt_int64(5);
    s.power_w = m_samples.opt_int64(6);
    processes.clear();
    // Process rows belong to the card-tick with exactly the same ts text; others are orphans.
    while (m_have_proc && m_procs.text(0) < s.ts) {
        m_have_proc = m_procs.step();
    }
    while (m_have_proc && m_procs.text(0) == s.ts) {
        PriorProcess p;
        p.pid = m_procs.int64(1);
        p.mem_used_mb = m_procs.opt_int64(2);
        if (!m_procs.is_null(3)) {
            p.user = m_procs.text(3);
        }
        p.name = m_procs.text(4);
        p.graphics = m_procs.text(5) == "graphics";
        processes.push_back(std::move(p));
        m_have_proc = m_procs.step();
    }
    return true;
}

} // namespace gua::store

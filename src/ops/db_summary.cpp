// Status queries over card_tick: all bounded to the newest tick or the last hour.
#include "ops/db_summary.hpp"

#include "core/duration.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "store/database.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace gua::ops {

namespace fs = std::filesystem;

namespace {

constexpr int k_stale_intervals = 3;

std::string gpu_label(const std::map<std::int64_t, store::GpuRow>& gpus, std::int64_t id) {
    const auto it = gpus.find(id);
    return it == gpus.end() ? fmt::format("GPU id {}", id)
                            : fmt::format("GPU {} ({})", it->second.index, it->second.uuid);
}

void add_quality_problems(store::Database& db, const std::map<std::int64_t, store::GpuRow>& gpus,
                          TimeUs since, DatabaseSummary& s) {
    const std::int64_t errors = [&] {
        store::Statement st =
            db.prepare("SELECT COALESCE(SUM(read_errors), 0) FROM card_tick WHERE t0_us >= ?");
        st.bind(1, std::int64_t{since});
        return st.step() ? st.int64(0) : 0;
    }();
    if (errors > 0) {
        s.problems.push_back(fmt::format("{} failed NVML readings in the last hour", errors));
    }
    store::Statement st = db.prepare(
        "SELECT gpu_id, util_source, count(*), MAX(t0_us) FROM card_tick WHERE t0_us >= ? "
        "GROUP BY gpu_id, util_source ORDER BY gpu_id, util_source");
    st.bind(1, std::int64_t{since});
    std::map<std::int64_t, TimeUs> last_seen;
    while (st.step()) {
        const std::int64_t gpu = st.int64(0);
        const auto it = gpus.find(gpu);
        const bool mig = it != gpus.end() && !it->second.parent_uuid.empty();
        last_seen[gpu] = std::max(last_seen[gpu], st.int64(3));
        if (st.int64(1) == 0 && !mig) {
            s.problems.push_back(fmt::format("{}: no utilization reading in {} ticks",
                                             gpu_label(gpus, gpu), st.int64(2)));
        } else if (st.int64(1) == 1) {
            s.problems.push_back(fmt::format("{}: utilization from single readings in {} ticks "
                                             "(no driver sample buffer; less precise)",
                                             gpu_label(gpus, gpu), st.int64(2)));
        }
    }
    for (const auto& [gpu, seen] : last_seen) {
        if (s.last_tick && seen < *s.last_tick) {
            s.problems.push_back(fmt::format("{} stopped reporting at {}", gpu_label(gpus, gpu),
                                             format_iso8601(seen)));
        }
    }
}

void read_summary(store::Database& db, const audit::Thresholds& thresholds, TimeUs now,
                  bool running, DatabaseSummary& s) {
    store::Reader reader(db);
    const std::vector<store::RunRow> runs = reader.runs();
    if (!runs.empty()) {
        s.last_run = runs.back();
    }
    std::map<std::int64_t, store::GpuRow> gpus;
    for (const store::GpuRow& g : reader.gpus()) {
        gpus.emplace(g.id, g);
    }
    if (!running && s.last_run && !s.last_run->ended_us) {
        s.problems.push_back("the last run did not stop cleanly (no final flush recorded)");
    }
    store::Statement last =
        db.prepare("SELECT t0_us, duration_us FROM card_tick ORDER BY t0_us DESC LIMIT 1");
    if (!last.step()) {
        return;
    }
    s.last_tick = last.int64(0);
    s.last_tick_end = last.int64(0) + last.int64(1);
    s.first_tick = db.scalar("SELECT MIN(t0_us) FROM card_tick");
    store::Statement recent = db.prepare("SELECT DISTINCT gpu_id FROM card_tick WHERE t0_us = ?");
    recent.bind(1, std::int64_t{*s.last_tick});
    while (recent.step()) {
        if (const auto it = gpus.find(recent.int64(0)); it != gpus.end()) {
            s.gpus.push_back(it->second);
        }
    }
    const DurationUs interval = s.last_run ? s.last_run->interval_us : 30 * k_us_per_second;
    if (running && *s.last_tick_end < now - k_stale_intervals * interval) {
        s.problems.push_back(fmt::format("no tick since {} ({} ago; one is due every {}): see "
                                         "the daemon's log",
                                         format_iso8601(*s.last_tick_end),
                                         format_duration(now - *s.last_tick_end),
                                         format_duration(interval)));
    }
    add_quality_problems(db, gpus, now - k_us_per_hour, s);
    report::BuildOptions options;
    options.from = now - k_us_per_hour;
    options.to = now;
    options.window_label = "1h";
    options.thresholds = thresholds;
    const report::ReportModel model =
        report::build_report(db, options, TimeZone::load("UTC").value());
    if (model.samples > 0) {
        s.last_hour = model.headline;
    }
}

} // namespace

DatabaseSummary summarize_database(const std::string& db, const audit::Thresholds& thresholds,
                                   TimeUs now, bool running) {
    DatabaseSummary s;
    std::error_code ec;
    s.exists = fs::exists(db, ec);
    if (!s.exists) {
        return s;
    }
    s.size_bytes = fs::file_size(db, ec);
    if (const auto wal = fs::file_size(db + "-wal", ec); !ec) {
        s.size_bytes += wal;
    }
    try {
        store::Database database(db, store::OpenMode::read_only);
        read_summary(database, thresholds, now, running, s);
    } catch (const std::exception& e) {
        s.error = e.what();
    }
    return s;
}

} // namespace gua::ops

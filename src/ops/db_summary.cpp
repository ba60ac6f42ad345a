// SPDX-License-Identifier: Apache-2.0
// Status queries over the raw tick blocks: all bounded to the newest ticks or the last hour.
#include "ops/db_summary.hpp"

#include "core/duration.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "store/database.hpp"
#include "store/raw.hpp"
#include "store/recent.hpp"

#include <fmt/format.h>

#include <algorithm>
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
    std::int64_t errors = 0;
    std::map<std::pair<std::int64_t, int>, std::int64_t> ticks_by_source; // (gpu, source) → ticks
    std::map<std::int64_t, TimeUs> last_seen;
    store::BlockScanner(db).scan(since, store::k_time_max, [&](const store::DecodedTicks& d) {
        for (const store::StoredCardTick& t : d.ticks) {
            errors += t.read_errors;
            ++ticks_by_source[{t.gpu_id, static_cast<int>(t.util_source)}];
            last_seen[t.gpu_id] = std::max(last_seen[t.gpu_id], t.t0);
        }
    });
    if (errors > 0) {
        s.problems.push_back(fmt::format("{} failed NVML readings in the last hour", errors));
    }
    for (const auto& [key, ticks] : ticks_by_source) {
        const auto [gpu, source] = key;
        const auto it = gpus.find(gpu);
        const bool mig = it != gpus.end() && !it->second.parent_uuid.empty();
        if (source == 0 && !mig) {
            s.problems.push_back(
                fmt::format("{}: no utilization reading in {} ticks", gpu_label(gpus, gpu), ticks));
        } else if (source == 1) {
            s.problems.push_back(fmt::format("{}: utilization from single readings in {} ticks "
                                             "(no driver sample buffer; less precise)",
                                             gpu_label(gpus, gpu), ticks));
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
    const store::RecentState recent = store::read_recent(db);
    if (recent.cards.empty()) {
        return;
    }
    const auto newest = std::max_element(
        recent.cards.begin(), recent.cards.end(),
        [](const store::RecentCard& a, const store::RecentCard& b) { return a.t0 < b.t0; });
    s.last_tick = newest->t0;
    s.last_tick_end = newest->t0 + newest->duration_us;
    if (const auto span = reader.span()) {
        s.first_tick = span->first;
    }
    for (const store::RecentCard& c : recent.cards) {
        if (const auto it = gpus.find(c.gpu_id); c.t0 == *s.last_tick && it != gpus.end()) {
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

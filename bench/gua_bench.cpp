// SPDX-License-Identifier: Apache-2.0
// Google Benchmark programs: the write path per tick (rollups included), the exporter's per-tick
// work, the report over fleet histories of 30 days and a year, the HTML page of the year, the demo.
#include "core/clock.hpp"
#include "core/timezone.hpp"
#include "export/metrics.hpp"
#include "fleet_workload.hpp"
#include "identity/resolver.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "sampler/sampler.hpp"
#include "store/raw.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "telemetry/synthetic.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace gua;

std::string temp_path(const std::string& name) {
    const char* dir = std::getenv("GUA_BENCH_DIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/" + name + "-" +
           std::to_string(getpid()) + ".db";
}

void remove_db(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(path + suffix);
    }
}

/// Write cost of one 12-GPU tick (1.28 processes per card on average), WAL + synchronous=NORMAL,
/// one transaction per tick, including the hourly rollups (every 120th tick starts a new hour).
void BM_WriteTick12Gpus(benchmark::State& state) {
    const std::string path = temp_path("bench-write");
    {
        store::Database db(path, store::OpenMode::create);
        store::migrate(db);
        bench::FleetOptions o;
        o.ticks = 2880;
        store::Writer writer(db, store::RunInfo{"bench", "x", "bench", o.interval_us, 10, 0});
        std::vector<telemetry::Tick> ticks;
        bench::generate_fleet(o, [&](const telemetry::Tick& t) { ticks.push_back(t); });
        std::int64_t n = 0;
        for (auto _ : state) {
            telemetry::Tick& t = ticks[static_cast<std::size_t>(n) % ticks.size()];
            t.t0 = o.start + n * o.interval_us; // always a new tick, as in the daemon
            writer.write(t);
            ++n;
        }
        state.counters["hours"] = static_cast<double>(n) / 120.0;
    }
    remove_db(path);
}
BENCHMARK(BM_WriteTick12Gpus)->Unit(benchmark::kMicrosecond);

/// A day of the reference workload on 8 GPUs at 30 s (2,880 ticks), for the exporter.
std::vector<telemetry::Tick> export_day() {
    bench::FleetOptions o;
    o.gpus = 8;
    o.ticks = 2880;
    std::vector<telemetry::Tick> ticks;
    bench::generate_fleet(o, [&](const telemetry::Tick& t) { ticks.push_back(t); });
    return ticks;
}

/// The sampler thread's share of `gua daemon --listen` per stored tick: feeding one 8-GPU tick
/// to the counters (classification, attribution, the recommender's evidence).
void BM_ExportObserveTick8Gpus(benchmark::State& state) {
    const std::vector<telemetry::Tick> day = export_day();
    exporter::MetricsOptions mo;
    mo.price_per_gpu_hour = 2.5;
    exporter::Metrics metrics(mo);
    std::int64_t n = 0;
    telemetry::Tick t;
    for (auto _ : state) {
        state.PauseTiming();
        t = day[static_cast<std::size_t>(n) % day.size()];
        t.t0 = day.front().t0 + n * t.duration_us; // always a new tick, as in the daemon
        ++n;
        state.ResumeTiming();
        metrics.observe(t);
    }
}
BENCHMARK(BM_ExportObserveTick8Gpus)->Unit(benchmark::kMicrosecond);

/// …and rendering the exposition after each tick, with a day of 8 GPUs fed in. Counter `bytes`:
/// the exposition's size.
void BM_ExportRender8Gpus(benchmark::State& state) {
    exporter::MetricsOptions mo;
    mo.price_per_gpu_hour = 2.5;
    exporter::Metrics metrics(mo);
    for (const telemetry::Tick& t : export_day()) {
        metrics.observe(t);
    }
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string text = metrics.render();
        bytes = text.size();
        benchmark::DoNotOptimize(text.data());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ExportRender8Gpus)->Unit(benchmark::kMicrosecond);

/// The report over `days` of a generated history whose file is named by the environment
/// variable `env` (bench/run.sh sets them), text rendering included. The window starts 17 min
/// 23 s past an hour, like `--since` does, so partial hours at both edges come from raw ticks.
void report_fleet(benchmark::State& state, const char* env, const char* days_env) {
    const char* db_path = std::getenv(env);
    const char* days_text = std::getenv(days_env);
    if (db_path == nullptr || days_text == nullptr) {
        state.SkipWithError("set the database and its days (bench/run.sh does)");
        return;
    }
    const TimeZone tz = TimeZone::load("UTC").value();
    const std::int64_t days = std::atoll(days_text);
    const bench::FleetOptions o;
    for (auto _ : state) {
        store::Database db(db_path, store::OpenMode::read_only);
        report::BuildOptions b;
        b.from = o.start + 17 * k_us_per_minute + 23 * k_us_per_second;
        b.to = b.from + days * k_us_per_day;
        b.window_label = std::to_string(days) + "d";
        const report::ReportModel m = report::build_report(db, b, tz);
        benchmark::DoNotOptimize(report::render_text(m, report::TextOptions{}));
    }
}

/// Rendering the HTML page of the year's report (the model built once, outside the timing);
/// counter `bytes`: the page's size.
void BM_RenderHtmlYear(benchmark::State& state) {
    const char* db_path = std::getenv("GUA_BENCH_YEAR_DB");
    const char* days_text = std::getenv("GUA_BENCH_YEAR_DAYS");
    if (db_path == nullptr || days_text == nullptr) {
        state.SkipWithError("set GUA_BENCH_YEAR_DB and GUA_BENCH_YEAR_DAYS (bench/run.sh does)");
        return;
    }
    const bench::FleetOptions o;
    store::Database db(db_path, store::OpenMode::read_only);
    report::BuildOptions b;
    b.from = o.start + 17 * k_us_per_minute + 23 * k_us_per_second;
    b.to = b.from + std::atoll(days_text) * k_us_per_day;
    b.window_label = std::string(days_text) + "d";
    const report::ReportModel m = report::build_report(db, b, TimeZone::load("UTC").value());
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string page = report::render_html(m);
        bytes = page.size();
        benchmark::DoNotOptimize(page.data());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderHtmlYear)->Unit(benchmark::kMillisecond);

void BM_ReportMonth12Gpus(benchmark::State& state) {
    report_fleet(state, "GUA_BENCH_MONTH_DB", "GUA_BENCH_MONTH_DAYS");
}
BENCHMARK(BM_ReportMonth12Gpus)->Unit(benchmark::kMillisecond);

void BM_ReportYear16Gpus(benchmark::State& state) {
    report_fleet(state, "GUA_BENCH_YEAR_DB", "GUA_BENCH_YEAR_DAYS");
}
BENCHMARK(BM_ReportYear16Gpus)->Unit(benchmark::kMillisecond);

/// Decoding one day of raw card-ticks of the 30-day history (12 GPUs at 30 s: 34,560 card-ticks)
/// with BlockScanner, as the hourly rollup and every raw report edge do.
void BM_ScanRawDay12Gpus(benchmark::State& state) {
    const char* db_path = std::getenv("GUA_BENCH_MONTH_DB");
    if (db_path == nullptr) {
        state.SkipWithError("set GUA_BENCH_MONTH_DB (bench/run.sh does)");
        return;
    }
    store::Database db(db_path, store::OpenMode::read_only);
    const bench::FleetOptions o;
    std::size_t ticks = 0;
    for (auto _ : state) {
        store::BlockScanner(db).scan(
            o.start, o.start + k_us_per_day,
            [&](const store::DecodedTicks& d) { ticks += d.ticks.size(); });
    }
    state.counters["card_ticks_per_s"] =
        benchmark::Counter(static_cast<double>(ticks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScanRawDay12Gpus)->Unit(benchmark::kMillisecond);

/// `gua demo` (classic workload) in process: sampler → writer → report, on a fresh database.
void BM_DemoClassic(benchmark::State& state) {
    const TimeZone tz = TimeZone::load("UTC").value();
    for (auto _ : state) {
        const std::string path = temp_path("bench-demo");
        {
            SimulatedClock clock(1767607200LL * k_us_per_second);
            auto source =
                telemetry::make_synthetic_source("classic", clock.wall_now(), k_us_per_second, 1);
            store::Database db(path, store::OpenMode::create);
            store::migrate(db);
            store::Writer writer(db, store::RunInfo{"demo", "x", "synthetic:classic",
                                                    k_us_per_second, 10, clock.wall_now()});
            identity::Resolver resolver;
            sampler::SamplerOptions so;
            so.interval_us = k_us_per_second;
            so.max_ticks = 30;
            sampler::Sampler sampler(*source, clock, resolver, so);
            const std::atomic<bool> stop{false};
            sampler.run(stop, [&](const telemetry::Tick& t) { writer.write(t); });
            report::BuildOptions b;
            b.from = 1767607200LL * k_us_per_second;
            b.to = clock.wall_now();
            const report::ReportModel m = report::build_report(db, b, tz);
            benchmark::DoNotOptimize(report::render_text(m, report::TextOptions{}));
        }
        remove_db(path);
    }
}
BENCHMARK(BM_DemoClassic)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

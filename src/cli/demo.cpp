// SPDX-License-Identifier: Apache-2.0
// `gua demo`: the real sampler → store → report pipeline on a synthetic workload, no GPU needed.
#include "audit/from_tick.hpp"
#include "cli/command.hpp"
#include "cli/report_options.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "identity/resolver.hpp"
#include "sampler/sampler.hpp"
#include "store/run_kinds.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "telemetry/synthetic.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <unistd.h>

namespace gua::cli {

namespace {

struct DemoOptions {
    std::string db;
    std::string workload = "classic";
    std::optional<int> ticks;
    std::string interval;
    std::uint64_t seed = 1;
    std::string start;
    bool realtime = false;
    bool quiet = false;
    ReportFlags flags;
};

std::string temp_db_path() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gua-demo-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) {
        throw Fatal("cannot create a temporary directory for the demo database (set --db)");
    }
    return dir + "/demo.db";
}

std::string tick_line(const telemetry::Tick& tick, const audit::Thresholds& thresholds) {
    std::string line = fmt::format("Tick {}  {}", tick.seq, format_iso8601(tick.t0));
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const audit::CardTick card = audit::to_card_tick(tick, c);
        line +=
            fmt::format("  GPU-{}={:<10}", c.device.index, audit::dominant_state(card, thresholds));
    }
    for (const std::string& lost : tick.lost_uuids) {
        line += fmt::format("  {}=lost", lost);
    }
    return line;
}

const telemetry::WorkloadInfo& find_workload(const std::string& name) {
    const telemetry::WorkloadInfo* info = nullptr;
    for (const telemetry::WorkloadInfo& w : telemetry::workloads()) {
        if (w.name == name) {
            info = &w;
        }
    }
    if (info == nullptr) {
        std::string names;
        for (const telemetry::WorkloadInfo& w : telemetry::workloads()) {
            names += (names.empty() ? "" : ", ") + std::string(w.name);
        }
        throw Fatal(fmt::format("--workload: unknown workload '{}' (known: {})", name, names),
                    ExitCode::usage);
    }
    return *info;
}

/// How many ticks the demo records, how long each is and when the first starts.
struct DemoPlan {
    int ticks = 0;
    DurationUs interval = 0;
    TimeUs start = 0;
};

/// The plan from the options and the workload's defaults; throws Fatal (usage) for a bad flag.
DemoPlan plan_demo(const DemoOptions& o, const telemetry::WorkloadInfo& info) {
    const int ticks = o.ticks.value_or(info.default_ticks);
    if (ticks < 0) {
        throw Fatal("--ticks: must be 0 or more", ExitCode::usage);
    }
    DurationUs interval = info.default_interval_us;
    if (!o.interval.empty()) {
        const Result<DurationUs> parsed = parse_duration(o.interval);
        if (!parsed) {
            throw Fatal("--interval: " + parsed.error().message, ExitCode::usage);
        }
        interval = parsed.value();
    }
    TimeUs start = wall_now() - static_cast<TimeUs>(ticks) * interval;
    if (!o.start.empty()) {
        const Result<TimeUs> parsed = parse_iso8601(o.start);
        if (!parsed) {
            throw Fatal("--start: " + parsed.error().message, ExitCode::usage);
        }
        start = parsed.value();
    }
    if (o.realtime) {
        start = wall_now();
    }
    return DemoPlan{ticks, interval, start};
}

/// Runs the sampler over `source` for the plan's ticks, writing each tick into `db_path`.
void record_demo(const DemoOptions& o, const DemoPlan& plan, const config::Config& cfg,
                 const std::string& db_path, telemetry::DeviceSource& source, Clock& clock) {
    store::Database db(db_path, store::OpenMode::create);
    store::migrate(db);
    store::Writer writer(
        db, store::RunInfo{"demo", source.driver_version(), "synthetic:" + o.workload,
                           plan.interval, cfg.thresholds.active_util_pct, clock.wall_now(),
                           cfg.thresholds.held_mib, cfg.thresholds.graphics_is_holder});
    if (!o.quiet) {
        fmt::print(stderr, "# Recording {} synthetic ticks of workload '{}' at {} interval\n",
                   plan.ticks, o.workload, format_duration(plan.interval));
    }
    identity::Resolver resolver;
    sampler::SamplerOptions so;
    so.interval_us = plan.interval;
    so.max_ticks = static_cast<std::uint64_t>(plan.ticks);
    so.active_threshold_pct = cfg.thresholds.active_util_pct;
    so.graphics_is_holder = cfg.thresholds.graphics_is_holder;
    so.held_mib = cfg.thresholds.held_mib;
    sampler::Sampler sampler(source, clock, resolver, so);
    const std::atomic<bool> stop{false};
    sampler.run(stop, [&](const telemetry::Tick& tick) {
        writer.write(tick);
        if (!o.quiet) {
            fmt::print(stderr, "{}\n", tick_line(tick, cfg.thresholds));
        }
    });
    writer.finish(clock.wall_now());
}

int run(const DemoOptions& o) {
    const DemoPlan plan = plan_demo(o, find_workload(o.workload));
    report::BuildOptions b;
    const config::Config cfg = apply_config(o.flags, b);
    const std::string db_path = o.db.empty() ? temp_db_path() : o.db;
    if (o.db.empty()) {
        fmt::print(stderr, "(using temporary database: {})\n", db_path);
    } else {
        store::refuse_recorded_data(db_path);
    }
    std::unique_ptr<Clock> clock;
    if (o.realtime) {
        clock = std::make_unique<SystemClock>();
    } else {
        clock = std::make_unique<SimulatedClock>(plan.start);
    }
    const std::unique_ptr<telemetry::DeviceSource> source =
        telemetry::make_synthetic_source(o.workload, clock->wall_now(), plan.interval, o.seed);
    record_demo(o, plan, cfg, db_path, *source, *clock);
    b.from = plan.start;
    b.to = std::max(clock->wall_now(), plan.start + 1);
    b.window_label = format_duration(std::max<DurationUs>(b.to - b.from, 1));
    return print_report(db_path, b, o.flags);
}

} // namespace

Runner register_demo(CLI::App& app) {
    auto o = std::make_shared<DemoOptions>();
    std::string workloads;
    for (const telemetry::WorkloadInfo& w : telemetry::workloads()) {
        workloads += fmt::format("\n  {:<10} {} (default {} ticks × {})", w.name, w.description,
                                 w.default_ticks, format_duration(w.default_interval_us));
    }
    CLI::App* cmd = app.add_subcommand(
        "demo", "Record a synthetic workload and print its report (no GPU needed)");
    cmd->footer("Workloads:" + workloads);
    cmd->add_option("--db", o->db, "Database to write (default: a new temporary file)");
    cmd->add_option("--workload", o->workload, "Synthetic workload")->capture_default_str();
    cmd->add_option("--ticks", o->ticks, "Number of ticks to record (default: per workload)");
    cmd->add_option("--interval", o->interval, "Tick length (default: per workload)");
    cmd->add_option("--seed", o->seed, "Seed for the workload's random parts")
        ->capture_default_str();
    cmd->add_option("--start", o->start,
                    "Simulated start time (ISO 8601; default: so that the run ends now)");
    cmd->add_flag("--realtime", o->realtime, "Pace the run in real time instead of simulating");
    cmd->add_flag("--quiet,-q", o->quiet, "Do not print a line per tick");
    add_report_flags(*cmd, o->flags);
    return [o] { return run(*o); };
}

} // namespace gua::cli

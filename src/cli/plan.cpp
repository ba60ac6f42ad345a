// SPDX-License-Identifier: Apache-2.0
// `gua plan`: how many GPUs the recorded work needs under an idle timeout and a sharing mode,
// replayed from the raw card-ticks of a window (src/plan, docs/plan.md).
#include "cli/command.hpp"
#include "cli/output_file.hpp"
#include "cli/report_options.hpp"
#include "cli/validators.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "core/time.hpp"
#include "plan/load.hpp"
#include "plan/render.hpp"
#include "plan/sweep.hpp"
#include "report/window_args.hpp"
#include "store/database.hpp"
#include "store/paths.hpp"
#include "store/reader.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace gua::cli {

namespace {

struct PlanCommandOptions {
    std::string db;
    std::string since = "7d";
    bool since_given = false;
    std::string until;
    std::string from;
    std::string to;
    std::string gpu;
    std::string user;
    std::vector<std::string> timeouts;
    std::vector<std::string> shares;
    int gpus = 0;
    std::string wait_interactive = "1m";
    std::string wait_batch = "1h";
    std::string format = "text";
    std::string output;
    ReportFlags flags; ///< --config and --price only
};

DurationUs duration_flag(const std::string& flag, const std::string& text) {
    const Result<DurationUs> d = parse_duration(text);
    if (!d) {
        throw Fatal(fmt::format("{} {}: {}", flag, text, d.error().message), ExitCode::usage);
    }
    return d.value();
}

plan::PlanOptions plan_options(const PlanCommandOptions& o, const report::BuildOptions& b) {
    plan::PlanOptions p;
    for (const std::string& t : o.timeouts) {
        if (t == "none") {
            p.timeouts.emplace_back(std::nullopt);
        } else {
            p.timeouts.emplace_back(duration_flag("--idle-timeout", t));
        }
    }
    for (const std::string& s : o.shares) {
        p.shares.push_back(*plan::parse_share(s)); // CLI11 checked the names
    }
    if (o.gpus > 0) {
        p.gpus = o.gpus;
    }
    p.objective.interactive_us = duration_flag("--wait-interactive", o.wait_interactive);
    p.objective.batch_us = duration_flag("--wait-batch", o.wait_batch);
    p.pricing = b.pricing;
    return p;
}

std::string database_path(const std::string& given) {
    if (!given.empty()) {
        return given;
    }
    if (const std::optional<std::string> found = store::default_read_path()) {
        return *found;
    }
    throw Fatal(fmt::format("no database found at {} or {} (start recording with `gua daemon`, "
                            "try `gua demo`, or pass --db PATH)",
                            store::user_db_path(), store::k_system_db_path));
}

/// Without window flags, a recording younger than the default window is planned over its own
/// raw span (the plan replays raw card-ticks only).
void clamp_to_recording(store::Database& db, report::BuildOptions& b) {
    store::Reader reader(db);
    if (const auto span = reader.span(); span && span->first > b.from && span->first < b.to) {
        b.from = span->first;
    }
}

int run(const PlanCommandOptions& o) {
    report::BuildOptions b;
    const config::Config cfg = apply_config(o.flags, b);
    report::resolve_window(report::WindowArgs{o.since, o.until, o.from, o.to}, wall_now(), b, "--");
    const plan::PlanOptions options = plan_options(o, b);
    store::Database db(database_path(o.db), store::OpenMode::read_only);
    store::check_readable(db);
    if (!o.since_given && o.until.empty() && o.from.empty() && o.to.empty()) {
        clamp_to_recording(db, b);
    }
    plan::LoadOptions load;
    load.from = b.from;
    load.to = b.to;
    if (!o.gpu.empty()) {
        load.gpu = o.gpu;
    }
    if (!o.user.empty()) {
        load.user = o.user;
    }
    load.thresholds = b.thresholds;
    load.raw_retention_us = cfg.retention.raw_us;
    const plan::Demand demand = plan::load_demand(db, load);
    if (demand.coverage.raw_ticks == 0) {
        throw Fatal(fmt::format("no raw card-ticks from {} to {} to replay (the plan needs "
                                "per-process detail, which rollups do not keep)",
                                format_iso8601(b.from), format_iso8601(b.to)));
    }
    const plan::PlanResult result = plan::run_plan(demand, options);
    std::string text;
    if (o.format == "json") {
        text = plan::plan_json(result).dump(2) + "\n";
    } else if (o.format == "html") {
        text = plan::plan_html(result);
    } else {
        text = plan::plan_text(result);
    }
    if (o.output.empty() || o.output == "-") {
        fmt::print("{}", text);
    } else {
        write_user_file("--output", o.output, text);
    }
    return 0;
}

void add_window_flags(CLI::App& cmd, PlanCommandOptions& o) {
    cmd.add_option("--db", o.db, "Database to read (default: the user's, else the system's)")
        ->check(non_empty());
    cmd.add_option("--since", o.since,
                   "Window length back from --until/now (e.g. 30m, 7d, 2w; by default the "
                   "recorded span when that is shorter)")
        ->capture_default_str();
    cmd.add_option("--until", o.until, "End the window this long ago (e.g. 1d)");
    CLI::Option* from =
        cmd.add_option("--from", o.from, "Absolute window start (ISO 8601, e.g. 2026-05-01)");
    CLI::Option* to = cmd.add_option("--to", o.to, "Absolute window end (ISO 8601; default now)");
    from->excludes("--since")->excludes("--until");
    to->excludes("--until");
    cmd.add_option("--gpu", o.gpu, "Only this GPU (index or uuid prefix)")->check(non_empty());
    cmd.add_option("--user", o.user, "Only card-ticks where this user had a process")
        ->check(non_empty());
}

} // namespace

Runner register_plan(CLI::App& app) {
    auto o = std::make_shared<PlanCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan", "How many GPUs the recorded work needs under an idle timeout and MIG or MPS "
                "sharing: replay the raw history, count cards in use and waits");
    add_window_flags(*cmd, *o);
    cmd->add_option("--idle-timeout", o->timeouts,
                    "Cut idle-held streaks at T (e.g. 30m, 1h; none = no policy); repeat for "
                    "several (default: the sweep 15m 30m 1h 2h 4h 8h none)")
        ->allow_extra_args(false);
    cmd->add_option("--share", o->shares,
                    "exclusive, mig or mps; repeat for several "
                    "(default: all three)")
        ->check(CLI::IsMember({"exclusive", "mig", "mps"}))
        ->allow_extra_args(false);
    cmd->add_option("--gpus", o->gpus, "Also replay on N GPUs of each model and show its waits")
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--wait-interactive", o->wait_interactive,
                    "Objective: p95 wait of interactive units at most this")
        ->capture_default_str();
    cmd->add_option("--wait-batch", o->wait_batch, "Objective: p95 wait of other units")
        ->capture_default_str();
    cmd->add_option("--format", o->format, "text, json or html")
        ->check(CLI::IsMember({"text", "json", "html"}))
        ->capture_default_str();
    cmd->add_option("--output", o->output, "Write to FILE instead of stdout");
    cmd->add_option("--config", o->flags.config, "Config file (thresholds, prices, retention)")
        ->check(non_empty());
    cmd->add_option("--price", o->flags.price,
                    "Price per GPU-hour for every GPU, e.g. 3.50 (overrides [pricing])")
        ->check(price_per_gpu_hour());
    CLI::Option* since = cmd->get_option("--since");
    return [o, since] {
        o->since_given = since->count() > 0;
        return run(*o);
    };
}

} // namespace gua::cli

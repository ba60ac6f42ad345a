// SPDX-License-Identifier: Apache-2.0
// `gua report`: the audit of a recorded window (gpu-usage-audit's flags plus absolute ranges).
#include "cli/command.hpp"
#include "cli/report_fleet.hpp"
#include "cli/report_options.hpp"
#include "cli/report_plan.hpp"
#include "cli/validators.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "report/window_args.hpp"
#include "store/database.hpp"
#include "store/paths.hpp"
#include "store/reader.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace gua::cli {

namespace {

struct ReportCommandOptions {
    std::string db;
    std::string since = "7d";
    bool since_given = false; ///< --since on the command line (not its default)
    std::string until;
    std::string from;
    std::string to;
    std::string interval;
    std::string gpu;
    std::string user;
    std::string job;
    std::string group_by;
    bool plan = false; ///< --plan: §8's culling and sharing remedies with the plan's figures
    ReportFlags flags;
    report::FleetOptions fleet;
};

DurationUs parse_duration_flag(const std::string& flag, const std::string& text) {
    Result<DurationUs> d = parse_duration(text);
    if (!d) {
        throw Fatal(fmt::format("{}: {}", flag, d.error().message), ExitCode::usage);
    }
    return d.value();
}

/// Without --since, --until, --from or --to, a recording younger than the default window is
/// reported over its own span (gpu-usage-audit's min(--since, age)): the charts and shares cover
/// what was recorded instead of days of "no data". Rollups count: retention may have removed the
/// oldest raw ticks.
void clamp_default_window(const std::string& db_path, report::BuildOptions& b) {
    store::Database db(db_path, store::OpenMode::read_only);
    store::check_readable(db); // a foreign or older file is named as the report would name it
    store::Reader reader(db);
    std::optional<TimeUs> first;
    if (const auto span = reader.span()) {
        first = span->first;
    }
    if (const auto rollups = reader.rollup_span()) {
        first = first ? std::min(*first, rollups->first) : rollups->first;
    }
    if (first && *first > b.from && *first < b.to) {
        b.from = *first;
        b.window_label = format_duration(b.to - b.from) + " (all recorded)";
    }
}

/// --job and --group-by (user, team and namespace replace [report] group_by).
void apply_job_flags(const ReportCommandOptions& o, report::BuildOptions& b) {
    if (!o.job.empty()) {
        b.job = o.job;
    }
    if (o.group_by == "job") {
        b.group_by_job = true;
    } else if (o.group_by == "user") {
        b.grouping.by = audit::GroupBy::user;
    } else if (o.group_by == "team") {
        b.grouping.by = audit::GroupBy::team;
    } else if (o.group_by == "namespace") {
        b.grouping.by = audit::GroupBy::pod_namespace;
    }
}

int run(const ReportCommandOptions& o) {
    // Every flag is checked before the database is looked for: a usage error exits 2 with or
    // without one.
    check_format(o.flags);
    if (o.plan && o.flags.format == "csv") {
        throw Fatal("--plan needs --format text, json or html (the CSV tables have no §8)",
                    ExitCode::usage);
    }
    if (o.group_by == "job" && !o.fleet.url.empty()) {
        throw Fatal("--group-by job needs a database (--db): the fleet's counters carry no job",
                    ExitCode::usage);
    }
    report::BuildOptions b;
    const config::Config cfg = apply_config(o.flags, b);
    report::resolve_window(report::WindowArgs{o.since, o.until, o.from, o.to}, wall_now(), b, "--");
    std::string db = o.db;
    if (db.empty() && o.fleet.url.empty()) {
        const std::optional<std::string> found = store::default_read_path();
        if (!found) {
            throw Fatal(fmt::format("no database found at {} or {} (start recording with `gua "
                                    "daemon`, try `gua demo`, or pass --db PATH)",
                                    store::user_db_path(), store::k_system_db_path));
        }
        db = *found;
    }
    const bool default_window =
        o.job.empty() && !o.since_given && o.until.empty() && o.from.empty() && o.to.empty();
    if (default_window && o.fleet.url.empty()) {
        clamp_default_window(db, b);
    }
    if (!o.interval.empty()) {
        b.interval_override = parse_duration_flag("--interval", o.interval);
    }
    if (!o.gpu.empty()) {
        b.gpu = o.gpu;
    }
    if (!o.user.empty()) {
        b.user = o.user;
    }
    apply_job_flags(o, b);
    if (!o.fleet.url.empty()) {
        return print_fleet_report(o.fleet, b, o.flags);
    }
    return o.plan ? print_report_with_plan(db, b, o.flags, cfg) : print_report(db, b, o.flags);
}

} // namespace

Runner register_report(CLI::App& app) {
    auto o = std::make_shared<ReportCommandOptions>();
    CLI::App* cmd = app.add_subcommand("report", "Print the audit of a recorded window");
    cmd->add_option("--db", o->db, "Database to read (default: the user's, else the system's)")
        ->check(non_empty());
    CLI::Option* since =
        cmd->add_option("--since", o->since,
                        "Window length back from --until/now (e.g. 30m, 7d, 2w; by default the "
                        "recorded span when that is shorter)")
            ->capture_default_str();
    cmd->add_option("--until", o->until, "End the window this long ago (e.g. 1d)");
    CLI::Option* from =
        cmd->add_option("--from", o->from, "Absolute window start (ISO 8601, e.g. 2026-05-01)");
    CLI::Option* to = cmd->add_option("--to", o->to, "Absolute window end (ISO 8601; default now)");
    // One way to give each end of the window: --from replaces --since, --to replaces --until.
    from->excludes("--since")->excludes("--until");
    to->excludes("--until");
    cmd->add_option("--interval", o->interval,
                    "Override the recorded tick duration (as gpu-usage-audit; not needed)");
    cmd->add_option("--gpu", o->gpu, "Only this GPU (index or uuid prefix)")->check(non_empty());
    cmd->add_option("--user", o->user, "Only card-ticks where this user had a process")
        ->check(non_empty());
    CLI::Option* job =
        cmd->add_option("--job", o->job,
                        "Only this job (Slurm job id, <namespace>/<pod> or reservation): its share "
                        "of its cards over its allocation window")
            ->check(non_empty());
    job->excludes(since)
        ->excludes("--until")
        ->excludes(from)
        ->excludes(to)
        ->excludes("--user")
        ->excludes("--interval");
    cmd->add_option("--group-by", o->group_by,
                    "Group §4 by user, team, namespace (replacing [report] group_by) or job (one "
                    "row per job: owner, GPUs, active, idle-held and allocated-unused hours, cost)")
        ->check(CLI::IsMember({"user", "team", "namespace", "job"}));
    cmd->add_flag(
           "--plan", o->plan,
           "Replay the window's raw history (as `gua plan`) and give §8's idle-culling and "
           "gpu-sharing remedies the GPUs the same work needs, at the policy's idle timeout (else "
           "1h), exclusive, MIG and MPS")
        ->excludes(job)
        ->excludes("--interval");
    add_report_flags(*cmd, o->flags);
    add_fleet_flags(*cmd, o->fleet);
    cmd->get_option("--prometheus")->excludes("--db");
    cmd->get_option("--prometheus")->excludes(job);
    cmd->get_option("--prometheus")->excludes("--plan");
    return [o, since] {
        o->since_given = since->count() > 0;
        return run(*o);
    };
}

} // namespace gua::cli

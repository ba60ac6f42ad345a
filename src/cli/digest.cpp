// SPDX-License-Identifier: Apache-2.0
// `gua digest`: the window's active, idle-held and allocated-unused GPU-hours, cost, trend,
// longest idle-held stretches and remedy, for each user, team and the admin.
#include "cli/command.hpp"
#include "cli/digest_output.hpp"
#include "cli/digest_send.hpp"
#include "cli/report_options.hpp"
#include "cli/validators.hpp"
#include "core/fatal.hpp"
#include "report/digest_build.hpp"
#include "report/window_args.hpp"
#include "store/database.hpp"
#include "store/paths.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace gua::cli {

namespace {

struct DigestCommandOptions {
    std::string db;
    std::string config;
    std::string since = "7d";
    std::string until;
    std::string from;
    std::string to;
    std::string tz;
    std::string format = "text";
    std::string who = "all";
    std::string output_dir;
    bool dry_run = false;
};

std::string digest_database_path(const std::string& given) {
    if (!given.empty()) {
        return given;
    }
    const std::optional<std::string> found = store::default_read_path();
    if (!found) {
        throw Fatal(fmt::format("no database found at {} or {} (start recording with `gua "
                                "daemon`, try `gua demo`, or pass --db PATH)",
                                store::user_db_path(), store::k_system_db_path));
    }
    return *found;
}

report::DigestPlan plan_of(const DigestCommandOptions& o, const config::DigestSettings& s,
                           const report::BuildOptions& b) {
    report::DigestPlan p;
    p.options = b;
    p.min_idle_held_hours = s.min_idle_held_hours;
    if (s.group_by == "none") {
        p.teams.reset();
    } else {
        p.teams = s.group_by == "namespace" ? audit::GroupBy::pod_namespace : audit::GroupBy::team;
    }
    p.users = o.who == "all" || o.who == "user";
    p.team_digests = o.who == "all" || o.who == "team";
    p.admin = o.who == "all" || o.who == "admin";
    return p;
}

std::string address_of(const report::DigestFigures& f, const config::DigestSettings& s) {
    if (f.kind == "admin") {
        return s.admin;
    }
    const auto it = s.recipients.find(f.name);
    return it == s.recipients.end() ? std::string() : it->second;
}

int run(const DigestCommandOptions& o) {
    if (o.format == "html" && o.output_dir.empty() && o.who == "all") {
        throw Fatal("--format html prints one digest: give --output-dir DIR or --for admin",
                    ExitCode::usage);
    }
    ReportFlags flags;
    flags.config = o.config;
    flags.tz = o.tz;
    report::BuildOptions b;
    const config::Config cfg = apply_config(flags, b);
    report::resolve_window(report::WindowArgs{o.since, o.until, o.from, o.to}, wall_now(), b, "--");
    const TimeZone tz = report_zone(b);
    store::Database db(digest_database_path(o.db), store::OpenMode::read_only);
    store::check_readable(db);
    std::vector<DigestItem> items;
    for (report::DigestFigures& f : report::build_digests(db, plan_of(o, cfg.digest, b), tz)) {
        report::DigestMessage m = report::digest_message(f, address_of(f, cfg.digest));
        items.push_back(DigestItem{std::move(f), std::move(m)});
    }
    // With [mail] or a [webhook.NAME] for digests, they are sent (and --output-dir still writes
    // the files); without, the bodies go to stdout or --output-dir as before.
    const notify::TransportList transports = digest_transports(cfg);
    if (o.dry_run) {
        if (!transports.empty()) {
            dry_run_sends(items, transports, cfg);
        }
        if (transports.empty() || !o.output_dir.empty()) {
            dry_run_digests(items, o.output_dir);
        }
    } else if (!o.output_dir.empty()) {
        write_digests(items, o.output_dir);
    } else if (transports.empty()) {
        print_digests(items, o.format);
    }
    if (!o.dry_run && !transports.empty()) {
        send_digests(items, transports, cfg);
    }
    return 0;
}

} // namespace

Runner register_digest(CLI::App& app) {
    auto o = std::make_shared<DigestCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "digest", "Write each user's, team's and the admin's digest of a window (default: the "
                  "last 7 days) against the period before");
    cmd->add_option("--db", o->db, "Database to read (default: the user's, else the system's)")
        ->check(non_empty());
    cmd->add_option("--config", o->config,
                    "Config file (default: ~/.config/gua/gua.toml or /etc/gua/gua.toml if present)")
        ->check(non_empty());
    CLI::Option* since =
        cmd->add_option("--since", o->since, "Window length back from --until/--to/now (e.g. 7d)")
            ->capture_default_str();
    cmd->add_option("--until", o->until, "End the window this long ago (e.g. 1d)");
    CLI::Option* from =
        cmd->add_option("--from", o->from, "Absolute window start (ISO 8601, e.g. 2026-05-01)");
    CLI::Option* to = cmd->add_option("--to", o->to, "Absolute window end (ISO 8601; default now)");
    from->excludes(since)->excludes("--until");
    to->excludes("--until");
    cmd->add_option("--tz", o->tz, "Time zone of §8's office hours (default: [report] time_zone)")
        ->check(non_empty());
    cmd->add_option("--format", o->format, "Format of the digests on stdout")
        ->check(CLI::IsMember({"text", "html", "json"}))
        ->capture_default_str();
    cmd->add_option("--for", o->who, "Only the digests of users, teams or the admin")
        ->check(CLI::IsMember({"all", "user", "team", "admin"}))
        ->capture_default_str();
    cmd->add_option("--output-dir", o->output_dir,
                    "Write KIND-NAME.txt, .html and .json per recipient into this directory")
        ->check(non_empty());
    cmd->add_flag("--dry-run", o->dry_run,
                  "List who would get which digest (files, mail, webhooks) without writing or "
                  "sending any");
    return [o] { return run(*o); };
}

} // namespace gua::cli

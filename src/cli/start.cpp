// SPDX-License-Identifier: Apache-2.0
// `gua start`: install and enable gua.service under systemd, else start the daemon in the
// background; --dry-run prints the same steps without doing them.
#include "cli/command.hpp"
#include "cli/ops_context.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "ops/command.hpp"
#include "ops/persistence.hpp"
#include "ops/start_plan.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace gua::cli {

namespace {

struct StartCommandOptions {
    std::string root;
    std::string interval;
    std::string timeout;
    bool dry_run = false;
};

std::string running_line(const ops::Installation& installed, const std::string& db) {
    std::string who = to_string(installed.mode);
    if (installed.daemon) {
        who += fmt::format(", pid {}, since {}", installed.daemon->pid,
                           format_iso8601(ops::start_time(installed.daemon->start_ticks)));
    }
    return fmt::format("gua is already running ({}), recording to {}.", who, db);
}

int report_failure(const ops::StartPlan& plan, const OpsContext& ctx) {
    if (plan.mode == ops::RunMode::service) {
        fmt::print(stderr, "gua start: failed; see `systemctl status gua` and `journalctl -u "
                           "gua`\n");
        return static_cast<int>(ExitCode::failure);
    }
    fmt::print(stderr, "gua start: failed; see {}\n", ctx.paths.log_file);
    if (plan.launch && plan.launch->status == ops::LaunchResult::Status::exited &&
        plan.launch->exit_code != 0) {
        return plan.launch->exit_code;
    }
    return static_cast<int>(ExitCode::failure);
}

/// The background daemon is not persistent: say so, and how to make it so.
void print_caveats(const StartCommandOptions& o, const OpsContext& ctx,
                   const ops::StartOptions& options) {
    std::vector<std::string> start{options.exe, "start"};
    if (!ctx.paths.live()) {
        start.insert(start.end(), {"--root", ctx.paths.root});
    }
    if (!o.interval.empty()) {
        start.insert(start.end(), {"--interval", o.interval});
    }
    for (const std::string& line : ops::background_caveats(
             ctx.paths, ops::detect_init(ctx.paths), ops::command_line(start),
             ops::command_line(ops::daemon_command(ctx.paths, ctx.db, options)))) {
        fmt::print("{}\n", line);
    }
}

void print_done(const ops::StartPlan& plan, const OpsContext& ctx,
                const ops::Systemctl& systemctl) {
    if (plan.mode == ops::RunMode::service && !systemctl.can_run("start")) {
        fmt::print("{} is installed and enabled in {}; it starts when that system boots.\n",
                   ops::k_unit_name, ctx.paths.root);
        return;
    }
    if (plan.mode == ops::RunMode::service) {
        fmt::print("gua is recording through {} to {}.\n", ops::k_unit_name, ctx.db);
    } else {
        fmt::print("gua is recording in the background (pid {}) to {}; log: {}.\n",
                   plan.launch ? plan.launch->id.pid : 0, ctx.db, ctx.paths.log_file);
    }
    fmt::print("`gua status` shows what it records; `gua report` prints the audit.\n");
}

int run(const StartCommandOptions& o) {
    const OpsContext ctx = load_ops_context(o.root);
    if (!ctx.config) {
        throw Fatal(ctx.config.error().message, ExitCode::usage);
    }
    if (!o.interval.empty()) {
        const Result<DurationUs> d = parse_duration(o.interval);
        if (!d || d.value() < 100 * k_us_per_ms) {
            throw Fatal("--interval: expected a duration of at least 100ms, e.g. 30s",
                        ExitCode::usage);
        }
    }
    const ops::Systemctl systemctl(ctx.paths);
    const ops::Installation installed = ops::inspect(ctx.paths, ctx.db, systemctl);
    const ops::StartOptions options{self_exe(), o.interval, parse_timeout(o.timeout)};
    const ops::StartPlan plan = ops::plan_start(ctx.paths, ctx.db, installed, systemctl, options);
    if (plan.already_running) {
        fmt::print("{}\n", running_line(installed, ctx.db));
    }
    if (plan.steps.empty()) {
        fmt::print("Nothing to do.\n");
        return 0;
    }
    if (o.dry_run) {
        fmt::print("gua start --dry-run: {}; would:\n", plan.why);
        ops::print_plan(plan.steps);
        fmt::print("Nothing was changed (dry run).\n");
        return 0;
    }
    fmt::print("gua start: {}\n", plan.why);
    if (!ops::run_plan(plan.steps)) {
        return report_failure(plan, ctx);
    }
    print_done(plan, ctx, systemctl);
    if (plan.mode == ops::RunMode::background) {
        print_caveats(o, ctx, options);
    }
    return 0;
}

} // namespace

Runner register_start(CLI::App& app) {
    auto o = std::make_shared<StartCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "start", "Install and start the recording daemon (systemd service, else background)");
    add_root_option(*cmd, o->root);
    cmd->add_flag("--dry-run", o->dry_run, "Print what would be done, change nothing");
    cmd->add_option("--interval", o->interval,
                    "Tick length of a background daemon (the service reads [daemon] interval)");
    add_timeout_option(*cmd, o->timeout, "30s");
    return [o] { return run(*o); };
}

} // namespace gua::cli

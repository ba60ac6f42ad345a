// SPDX-License-Identifier: Apache-2.0
// `gua stop`: stop the daemon whichever way it was started and wait for its final flush.
#include "cli/command.hpp"
#include "cli/ops_context.hpp"
#include "core/fatal.hpp"
#include "ops/stop_plan.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace gua::cli {

namespace {

struct StopCommandOptions {
    std::string root;
    std::string timeout;
    bool dry_run = false;
};

int run(const StopCommandOptions& o) {
    const OpsContext ctx = load_ops_context(o.root);
    const ops::Systemctl systemctl(ctx.paths);
    const ops::Installation installed = ops::inspect(ctx.paths, ctx.db, systemctl);
    const std::vector<ops::Step> steps =
        ops::plan_stop(ctx.paths, ctx.db, installed, systemctl, parse_timeout(o.timeout));
    if (installed.mode == ops::RunMode::none) {
        fmt::print("gua is not running (no {} active, no live pid file at {}, no daemon locks {}): "
                   "nothing to stop.\n",
                   ops::k_unit_name, ctx.paths.pid_file, ctx.db);
    }
    if (steps.empty()) {
        return 0;
    }
    if (o.dry_run) {
        fmt::print("gua stop --dry-run: would:\n");
        ops::print_plan(steps);
        fmt::print("Nothing was changed (dry run).\n");
        return 0;
    }
    if (installed.mode != ops::RunMode::none) {
        fmt::print("gua stop: stopping the {}\n", to_string(installed.mode));
    }
    if (!ops::run_plan(steps)) {
        return static_cast<int>(ExitCode::failure);
    }
    if (installed.mode != ops::RunMode::none) {
        fmt::print("gua is stopped; the database {} is kept.\n", ctx.db);
    }
    return 0;
}

} // namespace

Runner register_stop(CLI::App& app) {
    auto o = std::make_shared<StopCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "stop", "Stop the recording daemon (service or background) after its final flush");
    add_root_option(*cmd, o->root);
    cmd->add_flag("--dry-run", o->dry_run, "Print what would be done, change nothing");
    add_timeout_option(*cmd, o->timeout, "60s");
    return [o] { return run(*o); };
}

} // namespace gua::cli

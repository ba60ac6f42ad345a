// `gua status`: is a daemon recording, since when, what (GPUs, interval, last tick, data
// quality), into which database, and the last hour's headline.
#include "cli/command.hpp"
#include "cli/ops_context.hpp"
#include "cli/status_render.hpp"
#include "core/fatal.hpp"
#include "ops/db_summary.hpp"
#include "ops/installation.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace gua::cli {

namespace {

struct StatusCommandOptions {
    std::string root;
    std::string format = "text";
};

// An unprivileged user without a daemon of their own most likely asks about the system service.
OpsContext status_context(const std::string& root) {
    OpsContext ctx = load_ops_context(root);
    std::error_code ec;
    if (root.empty() && ctx.paths.scope == ops::Scope::user &&
        !std::filesystem::exists(ctx.db, ec) && !std::filesystem::exists(ctx.paths.pid_file, ec)) {
        return context_for(ops::system_paths(""));
    }
    return ctx;
}

int run(const StatusCommandOptions& o) {
    const OpsContext ctx = status_context(o.root);
    const ops::Systemctl systemctl(ctx.paths);
    StatusView view{ctx, ops::inspect(ctx.paths, ctx.db, systemctl), {}, wall_now()};
    const audit::Thresholds thresholds =
        ctx.config ? ctx.config.value().thresholds : audit::Thresholds{};
    view.database = ops::summarize_database(ctx.db, thresholds, view.now,
                                            view.installed.mode != ops::RunMode::none);
    const std::string out =
        o.format == "json" ? render_status_json(view) : render_status_text(view);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return view.installed.mode == ops::RunMode::none ? static_cast<int>(ExitCode::failure) : 0;
}

} // namespace

Runner register_status(CLI::App& app) {
    auto o = std::make_shared<StatusCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "status", "Show whether the daemon records, what, and the last hour (exit 1: not running)");
    add_root_option(*cmd, o->root);
    cmd->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [o] { return run(*o); };
}

} // namespace gua::cli

// SPDX-License-Identifier: Apache-2.0
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
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace gua::cli {

namespace {

struct StatusCommandOptions {
    std::string root;
    std::string db;
    std::string format = "text";
};

/// The database named by --db, else by $GUA_DB; empty when neither names one.
std::string named_db(const std::string& flag) {
    if (!flag.empty()) {
        return flag;
    }
    const char* env = std::getenv("GUA_DB");
    return env != nullptr ? std::string(env) : std::string();
}

// An unprivileged user without a daemon of their own most likely asks about the system service.
// A database named by --db or $GUA_DB replaces the one the configuration implies.
OpsContext status_context(const std::string& root, const std::string& db) {
    OpsContext ctx = load_ops_context(root);
    std::error_code ec;
    if (!db.empty()) {
        ctx.db = db;
        return ctx;
    }
    if (root.empty() && ctx.paths.scope == ops::Scope::user &&
        !std::filesystem::exists(ctx.db, ec) && !std::filesystem::exists(ctx.paths.pid_file, ec)) {
        return context_for(ops::system_paths(""));
    }
    return ctx;
}

int run(const StatusCommandOptions& o) {
    std::error_code ec;
    if (!o.db.empty() && !std::filesystem::exists(o.db, ec)) {
        throw Fatal(fmt::format("--db {}: no such database", o.db), ExitCode::usage);
    }
    const OpsContext ctx = status_context(o.root, named_db(o.db));
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
    cmd->add_option("--db", o->db,
                    "Database to summarize (default: $GUA_DB, else the one the daemon's "
                    "configuration names)");
    cmd->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [o] { return run(*o); };
}

} // namespace gua::cli

// SPDX-License-Identifier: Apache-2.0
// Shared setup of the operations subcommands.
#include "cli/ops_context.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>

namespace gua::cli {

void add_root_option(CLI::App& cmd, std::string& root) {
    cmd.add_option("--root", root,
                   "Act on the system installed under DIR (unit, config and state paths are "
                   "prefixed with it; the host's systemd is never started or stopped)");
}

void add_timeout_option(CLI::App& cmd, std::string& timeout, const std::string& fallback) {
    timeout = fallback;
    cmd.add_option("--timeout", timeout, "How long to wait for the daemon")->capture_default_str();
}

DurationUs parse_timeout(const std::string& text) {
    const Result<DurationUs> d = parse_duration(text);
    if (!d) {
        throw Fatal("--timeout: " + d.error().message, ExitCode::usage);
    }
    return d.value();
}

OpsContext context_for(const ops::Paths& paths) {
    OpsContext ctx;
    ctx.paths = paths;
    std::error_code ec;
    ctx.config_exists = std::filesystem::exists(paths.config_file, ec);
    if (ctx.config_exists) {
        ctx.config = config::load_config(paths.config_file);
    }
    ctx.db = paths.db;
    // A user's own daemon ignores the system config's database: that one is the service's.
    const bool system_config_for_user =
        paths.scope == ops::Scope::user && paths.config_file == "/etc/gua/gua.toml";
    if (ctx.config && ctx.config.value().db && !system_config_for_user) {
        const std::string& configured = *ctx.config.value().db;
        ctx.db = paths.scope == ops::Scope::system ? paths.under_root(configured) : configured;
    }
    return ctx;
}

OpsContext load_ops_context(const std::string& root) {
    return context_for(ops::resolve_paths(root));
}

std::string self_exe() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        throw Fatal("cannot find the gua binary (/proc/self/exe): " + ec.message());
    }
    return exe.string();
}

} // namespace gua::cli

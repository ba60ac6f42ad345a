// SPDX-License-Identifier: Apache-2.0
// `gua uninstall`: stop the daemon, disable and remove the service; keep the database (and say
// where it is) unless --purge.
#include "cli/command.hpp"
#include "cli/ops_context.hpp"
#include "core/fatal.hpp"
#include "core/units.hpp"
#include "ops/uninstall_plan.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace gua::cli {

namespace {

struct UninstallCommandOptions {
    std::string root;
    std::string timeout;
    bool purge = false;
    bool dry_run = false;
    bool package_removal = false; ///< run by the package's prerm: the gua binary is going away
};

void print_kept(const OpsContext& ctx, const ops::Installation& installed, bool package_removal) {
    std::error_code ec;
    if (std::filesystem::exists(ctx.db, ec)) {
        const auto bytes = std::filesystem::file_size(ctx.db, ec);
        if (package_removal) {
            fmt::print("Kept the database {} ({}); `apt purge gua` deletes it.\n", ctx.db,
                       format_bytes(ec ? 0 : bytes));
        } else {
            fmt::print("Kept the database {} ({}): `gua report --db {}` still reads it; "
                       "`gua uninstall --purge` deletes it.\n",
                       ctx.db, format_bytes(ec ? 0 : bytes), ctx.db);
        }
    }
    if (installed.unit_path && installed.unit_from_package && !package_removal) {
        fmt::print("{} belongs to the gua package: `apt remove gua` removes it.\n",
                   *installed.unit_path);
    }
}

int run(const UninstallCommandOptions& o) {
    const OpsContext ctx = load_ops_context(o.root);
    const ops::Systemctl systemctl(ctx.paths);
    const ops::Installation installed = ops::inspect(ctx.paths, ctx.db, systemctl);
    const std::vector<ops::Step> steps = ops::plan_uninstall(
        ctx.paths, ctx.db, installed, systemctl, o.purge, parse_timeout(o.timeout));
    if (steps.empty()) {
        if (installed.unit_path) {
            fmt::print("Nothing to uninstall: {} is not enabled and no daemon is running.\n",
                       *installed.unit_path);
        } else {
            fmt::print("Nothing to uninstall: no {} installed, no daemon running.\n",
                       ops::k_unit_name);
        }
        print_kept(ctx, installed, o.package_removal);
        return 0;
    }
    if (o.dry_run) {
        fmt::print("gua uninstall{} --dry-run: would:\n", o.purge ? " --purge" : "");
        ops::print_plan(steps);
        fmt::print("Nothing was changed (dry run).\n");
        return 0;
    }
    fmt::print("gua uninstall{}:\n", o.purge ? " --purge" : "");
    if (!ops::run_plan(steps)) {
        return static_cast<int>(ExitCode::failure);
    }
    if (o.purge && ctx.paths.scope == ops::Scope::user) {
        fmt::print("Removed your daemon's data.\n");
    } else if (o.purge) {
        fmt::print("Removed gua's service and data; the system user gua (if any) is kept.\n");
    } else {
        print_kept(ctx, installed, o.package_removal);
    }
    return 0;
}

} // namespace

Runner register_uninstall(CLI::App& app) {
    auto o = std::make_shared<UninstallCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "uninstall", "Stop and remove the service; keep the database unless --purge");
    add_root_option(*cmd, o->root);
    cmd->add_flag("--purge", o->purge, "Also delete the database, the log and the configuration");
    cmd->add_flag("--dry-run", o->dry_run, "Print what would be done, change nothing");
    add_timeout_option(*cmd, o->timeout, "60s");
    // Hidden: the package's prerm says so, and the closing advice then names apt, not gua.
    cmd->add_flag("--package-removal", o->package_removal, "Run by the package's prerm")->group("");
    return [o] { return run(*o); };
}

} // namespace gua::cli

// SPDX-License-Identifier: Apache-2.0
// `gua doctor`: check everything gua needs, one line per check with the fix; the exit code is
// the worst finding (0 all good, 1 warnings, 2 failures).
#include "ops/doctor.hpp"

#include "alloc/slurm_layout.hpp"
#include "cli/command.hpp"
#include "cli/ops_context.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace gua::cli {

namespace {

struct DoctorCommandOptions {
    std::string root;
    std::string format = "text";
    std::string nvml_library;
};

std::string render_text(const std::vector<ops::Finding>& findings) {
    std::string out;
    for (const ops::Finding& f : findings) {
        out += fmt::format("{} {}: {}{}\n", ops::symbol(f.severity), f.title, f.message,
                           f.fix.empty() ? "" : " — fix: " + f.fix);
    }
    return out;
}

std::string render_json(const std::vector<ops::Finding>& findings, int exit_code) {
    nlohmann::json checks = nlohmann::json::array();
    for (const ops::Finding& f : findings) {
        checks.push_back({{"check", f.check},
                          {"title", f.title},
                          {"status", ops::to_string(f.severity)},
                          {"message", f.message},
                          {"fix", f.fix}});
    }
    // schema_version: the layout of this object (man gua, doctor); raised when it changes.
    return nlohmann::json{{"schema_version", 1}, {"checks", checks}, {"exit_code", exit_code}}.dump(
               2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
}

int run(const DoctorCommandOptions& o) {
    const OpsContext ctx = load_ops_context(o.root);
    const ops::Systemctl systemctl(ctx.paths);
    ops::DoctorInputs inputs{ctx.paths, ctx.db, o.nvml_library, ctx.config, ctx.config_exists};
    std::vector<ops::Finding> findings = ops::run_doctor(inputs, systemctl);
    {
        // Slurm's cgroup layout and whether processes' jobs can be named (docs/allocations.md).
        const bool mapping = ctx.config && !ctx.config.value().allocations.mapping_dirs.empty();
        const alloc::SlurmLayout layout = alloc::detect_slurm_layout(ctx.paths.root);
        const bool warn = alloc::slurm_layout_warns(layout, mapping);
        findings.push_back(ops::Finding{
            "slurm_cgroups", "Slurm cgroups",
            warn ? ops::Severity::warn : (layout.slurm ? ops::Severity::ok : ops::Severity::info),
            alloc::describe_slurm_layout(layout, mapping),
            warn ? "set CgroupJobIdPaths=yes in cgroup.conf, or run the shipped prolog and set "
                   "[allocations] mapping_dir (docs/allocations.md)"
                 : ""});
    }
    const int code = ops::doctor_exit_code(findings);
    const std::string out =
        o.format == "json" ? render_json(findings, code) : render_text(findings);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return code;
}

} // namespace

Runner register_doctor(CLI::App& app) {
    auto o = std::make_shared<DoctorCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "doctor", "Check the driver, GPUs, permissions, database, clock, service and config");
    add_root_option(*cmd, o->root);
    cmd->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    cmd->add_option("--nvml-library", o->nvml_library,
                    "Path of libnvidia-ml.so.1 (default: $GUA_NVML_LIBRARY, else the system's)");
    return [o] { return run(*o); };
}

} // namespace gua::cli

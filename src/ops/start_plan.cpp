// SPDX-License-Identifier: Apache-2.0
// Planning `gua start`.
#include "ops/start_plan.hpp"

#include "core/fatal.hpp"
#include "ops/packaged_files.hpp"
#include "ops/paths.hpp"
#include "ops/steps.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <pwd.h>

namespace gua::ops {

namespace {
bool has_user_entry(const std::string& passwd_file, const std::string& user) {
    std::ifstream in(passwd_file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(user + ":", 0) == 0) {
            return true;
        }
    }
    return false;
}

// Adds `useradd` for the service's system user when it is missing. In a --root tree without
// an etc/passwd there is no user database to add to, so nothing is planned.
void plan_user(const Paths& paths, std::vector<Step>& steps) {
    std::vector<std::string> argv{"useradd"};
    if (paths.live()) {
        if (::getpwnam("gua") != nullptr) {
            return;
        }
    } else {
        const std::string passwd = paths.under_root("/etc/passwd");
        if (!path_exists(passwd) || has_user_entry(passwd, "gua")) {
            return;
        }
        argv.insert(argv.end(), {"--prefix", paths.root});
    }
    argv.insert(argv.end(),
                {"--system", "--user-group", "--no-create-home", "--home-dir", "/var/lib/gua",
                 "--shell", "/usr/sbin/nologin", "--comment", "gua GPU usage audit", "gua"});
    steps.push_back(run_program(argv));
}

void plan_service(const Paths& paths, const Installation& installed, const Systemctl& systemctl,
                  const StartOptions& options, StartPlan& plan) {
    if (!options.interval.empty()) {
        throw Fatal(fmt::format("--interval is for the background daemon; the service reads "
                                "[daemon] interval from {}",
                                paths.config_file),
                    ExitCode::usage);
    }
    if (!installed.unit_path) {
        plan.steps.push_back(
            write_file(paths.unit_file, unit_text_for(options.exe), 0644, "systemd unit"));
        plan.steps.push_back(systemctl_step(systemctl, "daemon-reload"));
    }
    if (!path_exists(paths.config_file)) {
        plan.steps.push_back(
            write_file(paths.config_file, k_config_text, 0644, "default configuration"));
    }
    plan_user(paths, plan.steps);
    if (installed.enabled != true) {
        plan.steps.push_back(systemctl_step(systemctl, "enable"));
    }
    if (!plan.already_running) {
        plan.steps.push_back(systemctl_step(systemctl, "start"));
    }
}

Step launch_step(const Paths& paths, const std::string& db, const StartOptions& options,
                 const std::shared_ptr<LaunchResult>& out) {
    BackgroundLaunch launch{daemon_command(paths, db, options), paths.log_file, paths.pid_file,
                            options.ready_timeout};
    return Step{fmt::format("start in the background: {} (log {}, pid file {})",
                            command_line(launch.argv), paths.log_file, paths.pid_file),
                [launch, out]() -> Result<std::string> {
                    *out = launch_background(launch);
                    if (out->status != LaunchResult::Status::ready) {
                        return Error{out->message};
                    }
                    return fmt::format("pid {}", out->id.pid);
                }};
}

void plan_background(const Paths& paths, const std::string& db, const Installation& installed,
                     const StartOptions& options, StartPlan& plan) {
    if (plan.already_running) {
        return;
    }
    if (installed.pid_file.status == PidFileInfo::Status::stale) {
        plan.steps.push_back(
            remove_file(paths.pid_file, "stale pid file: " + installed.pid_file.reason));
    }
    if (!path_exists(paths.state_dir)) {
        plan.steps.push_back(make_directory(paths.state_dir, 0755));
    }
    if (paths.scope == Scope::system && !path_exists(paths.config_file)) {
        plan.steps.push_back(
            write_file(paths.config_file, k_config_text, 0644, "default configuration"));
    }
    plan.launch = std::make_shared<LaunchResult>();
    plan.steps.push_back(launch_step(paths, db, options, plan.launch));
}

} // namespace

std::string unit_text_for(const std::string& exe) {
    std::string text = k_unit_text;
    const std::string packaged = "ExecStart=/usr/bin/gua ";
    if (const std::size_t at = text.find(packaged); at != std::string::npos) {
        text.replace(at, packaged.size(), "ExecStart=" + exe + " ");
    }
    return text;
}

std::vector<std::string> daemon_command(const Paths& paths, const std::string& db,
                                        const StartOptions& options) {
    std::vector<std::string> argv{options.exe, "daemon",       "--db",   db,
                                  "--log",     paths.log_file, "--quiet"};
    if (paths.scope == Scope::system || path_exists(paths.config_file)) {
        argv.insert(argv.end(), {"--config", paths.config_file});
    }
    if (!options.interval.empty()) {
        argv.insert(argv.end(), {"--interval", options.interval});
    }
    return argv;
}

StartPlan plan_start(const Paths& paths, const std::string& db, const Installation& installed,
                     const Systemctl& systemctl, const StartOptions& options) {
    StartPlan plan;
    plan.already_running = installed.mode != RunMode::none;
    if (paths.scope == Scope::user) {
        plan.why = "not root: starting your own daemon in the background";
    } else if (!systemctl.booted()) {
        plan.why = fmt::format("systemd is not running here (no {}): starting the daemon in "
                               "the background",
                               paths.under_root("/run/systemd/system"));
    } else {
        plan.mode = RunMode::service;
        plan.why = fmt::format("systemd runs this system: installing and enabling {}", k_unit_name);
    }
    if (plan.mode == RunMode::service && installed.mode != RunMode::background &&
        installed.mode != RunMode::foreground) {
        plan_service(paths, installed, systemctl, options, plan);
    } else {
        plan.mode = plan.already_running ? installed.mode : RunMode::background;
        plan_background(paths, db, installed, options, plan);
    }
    return plan;
}

} // namespace gua::ops

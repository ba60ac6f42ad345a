// SPDX-License-Identifier: Apache-2.0
// Inspecting the installation: unit files, systemctl state, pid file and database lock.
#include "ops/installation.hpp"

#include "ops/command.hpp"
#include "ops/lock_holder.hpp"

#include <algorithm>
#include <filesystem>

namespace gua::ops {

const char* to_string(RunMode mode) {
    switch (mode) {
    case RunMode::service:
        return "systemd service";
    case RunMode::background:
        return "background daemon";
    case RunMode::foreground:
        return "foreground daemon";
    case RunMode::none:
        break;
    }
    return "not running";
}

bool owned_by_package(const Paths& paths, const std::string& file) {
    const std::string target =
        paths.live() ? file : "/" + std::filesystem::relative(file, paths.root).string();
    // dpkg's own answer ("gua: /lib/systemd/system/gua.service", or "a, gua: path" for a path
    // several packages share), not a read of its database files.
    const CommandResult r = run_command({"dpkg-query", "--root=" + paths.root, "-S", target});
    if (r.exit_code != 0) {
        return false;
    }
    const std::string owners = r.output.substr(0, r.output.find(": "));
    std::size_t start = 0;
    while (start <= owners.size()) {
        const std::size_t end = std::min(owners.find(", ", start), owners.size());
        if (owners.substr(start, end - start) == "gua") {
            return true;
        }
        start = end + 2;
    }
    return false;
}

Installation inspect(const Paths& paths, const std::string& db, const Systemctl& systemctl) {
    Installation in;
    in.systemd = systemctl.booted();
    std::error_code ec;
    for (const std::string& candidate : paths.unit_search) {
        if (std::filesystem::exists(candidate, ec)) {
            in.unit_path = candidate;
            in.unit_from_package = owned_by_package(paths, candidate);
            break;
        }
    }
    if (in.unit_path) {
        in.enabled = systemctl.is_enabled();
        if (in.systemd) {
            in.active = systemctl.is_active();
        }
    }
    in.pid_file = read_pid_file(paths.pid_file);
    in.lock_holder = database_lock_holder(db);
    in.alerts = database_alerts(db);
    if (in.active == "active" || in.active == "activating" || in.active == "reloading" ||
        in.active == "deactivating") {
        in.mode = RunMode::service;
        if (in.lock_holder) {
            in.daemon = identify(*in.lock_holder);
        }
    } else if (in.pid_file.status == PidFileInfo::Status::running) {
        in.mode = RunMode::background;
        in.daemon = in.pid_file.id;
    } else if (in.lock_holder) {
        in.mode = RunMode::foreground;
        in.daemon = identify(*in.lock_holder);
    }
    return in;
}

} // namespace gua::ops

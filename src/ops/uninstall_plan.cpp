// SPDX-License-Identifier: Apache-2.0
// Planning `gua uninstall`.
#include "ops/uninstall_plan.hpp"

#include "ops/paths.hpp"
#include "ops/steps.hpp"
#include "ops/stop_plan.hpp"

#include <filesystem>

namespace gua::ops {

namespace {
void plan_purge(const Paths& paths, const std::string& db, std::vector<Step>& steps) {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
        if (path_exists(db + suffix)) {
            steps.push_back(remove_file(db + suffix, *suffix == '\0' ? "database"
                                                                     : "database "
                                                                       "side file"));
        }
    }
    if (path_exists(paths.log_file)) {
        steps.push_back(remove_file(paths.log_file, "log"));
    }
    if (paths.scope == Scope::system && path_exists(paths.config_file) &&
        !owned_by_package(paths, paths.config_file)) {
        steps.push_back(remove_file(paths.config_file, "configuration"));
        steps.push_back(
            remove_empty_directory(std::filesystem::path(paths.config_file).parent_path()));
    }
    if (path_exists(paths.state_dir)) {
        steps.push_back(remove_empty_directory(paths.state_dir));
    }
}

} // namespace

std::vector<Step> plan_uninstall(const Paths& paths, const std::string& db,
                                 const Installation& installed, const Systemctl& systemctl,
                                 bool purge, DurationUs timeout) {
    std::vector<Step> steps = plan_stop(paths, db, installed, systemctl, timeout);
    if (installed.unit_path) {
        if (installed.enabled != false) {
            steps.push_back(systemctl_step(systemctl, "disable"));
        }
        if (*installed.unit_path == paths.unit_file && !installed.unit_from_package) {
            steps.push_back(remove_file(paths.unit_file, "systemd unit"));
            if (installed.systemd) {
                steps.push_back(systemctl_step(systemctl, "daemon-reload"));
            }
        }
    }
    if (purge) {
        plan_purge(paths, db, steps);
    }
    return steps;
}

} // namespace gua::ops

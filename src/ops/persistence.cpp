// SPDX-License-Identifier: Apache-2.0
// Init-system detection and the reboot caveat of a background daemon.
#include "ops/persistence.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace gua::ops {

InitSystem detect_init(const Paths& paths, const std::string& proc_root) {
    if (!paths.live()) {
        return InitSystem::unknown;
    }
    std::string comm;
    std::ifstream(proc_root + "/1/comm") >> comm;
    if (comm == "systemd") {
        return InitSystem::systemd;
    }
    if (comm == "openrc-init" || path_exists("/run/openrc")) {
        return InitSystem::openrc;
    }
    if (comm == "runit" || comm == "runsvdir") {
        return InitSystem::runit;
    }
    if (comm.starts_with("s6-")) {
        return InitSystem::s6;
    }
    if (path_exists("/.dockerenv") || path_exists("/run/.containerenv")) {
        return InitSystem::container;
    }
    if (comm == "init") {
        return InitSystem::sysvinit;
    }
    return comm.empty() ? InitSystem::unknown : InitSystem::container;
}

std::vector<std::string> background_caveats(const Paths& paths, InitSystem init,
                                            const std::string& start_command,
                                            const std::string& daemon_command) {
    std::vector<std::string> out;
    if (paths.scope == Scope::system) {
        out.push_back(fmt::format("It runs as root (not as user gua with only CAP_KILL, as "
                                  "gua.service does); its state directory {} is root's, mode "
                                  "0755, so every user can read the database.",
                                  paths.state_dir));
    } else {
        out.push_back(fmt::format("It runs as you, with its state in {}.", paths.state_dir));
    }
    out.push_back("It will NOT start again after a reboot.");
    const std::string cron = fmt::format("  @reboot {}", start_command);
    const std::string crontab = paths.scope == Scope::system ? "sudo crontab -e" : "crontab -e";
    switch (init) {
    case InitSystem::container:
        out.push_back("This looks like a container: to keep recording, make this the container's "
                      "command (or a program of its supervisor):");
        out.push_back("  " + daemon_command);
        return out;
    case InitSystem::systemd:
        out.push_back("systemd is pid 1 but not managing this system: once it is, `sudo gua start` "
                      "installs gua.service, which starts at boot. Until then, add to the "
                      "crontab (`" +
                      crontab + "`):");
        break;
    case InitSystem::openrc:
    case InitSystem::runit:
    case InitSystem::s6:
        out.push_back("To keep recording, run `" + daemon_command +
                      "` as a service of your init system (it stays in the foreground and "
                      "logs to its --log file), or add to the crontab (`" +
                      crontab + "`):");
        break;
    case InitSystem::sysvinit:
    case InitSystem::unknown:
        out.push_back("To start it at every boot, add this line to the crontab (`" + crontab +
                      "`):");
        break;
    }
    out.push_back(cron);
    return out;
}

} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// What is installed and running for a set of paths, found without changing anything: the unit
// and its state, the background daemon's pid file, and whoever holds the database lock.
#pragma once

#include "ops/lock_holder.hpp"
#include "ops/paths.hpp"
#include "ops/pid_file.hpp"
#include "ops/systemctl.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gua::ops {

/// How the daemon recording to the database was started.
enum class RunMode {
    none,       ///< nothing is recording
    service,    ///< gua.service under systemd
    background, ///< `gua start` without systemd (pid file)
    foreground, ///< someone ran `gua daemon` by hand (only the database lock says so)
};

/// Returns "not running", "systemd service", "background daemon" or "foreground daemon".
const char* to_string(RunMode mode);

/// A snapshot of the installation.
struct Installation {
    bool systemd = false;                 ///< systemd manages the target system
    std::optional<std::string> unit_path; ///< the installed gua.service, if any
    bool unit_from_package = false;       ///< the unit belongs to the gua Debian package
    std::optional<bool> enabled;          ///< nullopt: not installed or unknown
    std::string active = "unknown";       ///< systemctl is-active (only when installed)
    PidFileInfo pid_file;                 ///< the background daemon's pid file
    std::optional<pid_t> lock_holder;     ///< the process recording to `db` now
    std::vector<DaemonAlert> alerts;      ///< what that daemon warns about now
    RunMode mode = RunMode::none;
    std::optional<ProcessId> daemon; ///< the recording process, when known
};

/// Looks at the unit, the pid file and the lock of `db` (the database the paths' config names).
Installation inspect(const Paths& paths, const std::string& db, const Systemctl& systemctl);

/// True when dpkg (`dpkg-query -S`, for the system at paths.root) says the gua package installed
/// `file`; false also when dpkg-query is missing.
bool owned_by_package(const Paths& paths, const std::string& file);

} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// Where the operations commands (start, stop, status, uninstall, doctor) find the unit, the
// configuration and the state, under an optional --root prefix.
#pragma once

#include <string>
#include <vector>

namespace gua::ops {

/// Whose installation: the system service (root, or any --root tree) or one user's own daemon.
enum class Scope { system, user };

/// Every path the operations commands touch; all absolute and already inside `root`.
struct Paths {
    std::string root = "/"; ///< "/" for the live system, else the --root directory
    Scope scope = Scope::system;
    std::string unit_file;                ///< <root>/etc/systemd/system/gua.service (written by us)
    std::vector<std::string> unit_search; ///< unit files that count as installed, in order
    std::string config_file;              ///< <root>/etc/gua/gua.toml, or the user's config
    std::string state_dir;                ///< <root>/var/lib/gua, or $XDG_STATE_HOME/gua
    std::string db;                       ///< <state_dir>/gua.db unless the config names another
    std::string pid_file;                 ///< <state_dir>/gua.pid (background daemon)
    std::string log_file;                 ///< <state_dir>/gua.log (background daemon)

    /// True for the running system, false for a --root tree.
    bool live() const { return root == "/"; }
    /// `path` as seen on the target system (e.g. "/var/lib/gua"), prefixed with root.
    std::string under_root(const std::string& path) const;
};

/// True when `path` exists (false also when it cannot be examined).
bool path_exists(const std::string& path);

/// The name of the systemd unit.
inline constexpr const char* k_unit_name = "gua.service";

/// System-scope paths inside `root` ("" means "/"). Throws Fatal(usage) when `root` is not an
/// existing directory.
Paths system_paths(const std::string& root);

/// The unprivileged user's paths: state in $XDG_STATE_HOME/gua (~/.local/state/gua), config as
/// config::find_config_file() finds it (else ~/.config/gua/gua.toml).
Paths user_paths();

/// The paths a command uses: system_paths(root) with --root or as root, else user_paths().
Paths resolve_paths(const std::string& root);

} // namespace gua::ops

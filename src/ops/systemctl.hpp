// SPDX-License-Identifier: Apache-2.0
// systemctl for gua.service, replaceable for tests ($GUA_SYSTEMCTL names another program) and
// safe under --root: there only the offline verbs run, as `systemctl --root=DIR ...`.
#pragma once

#include "ops/command.hpp"
#include "ops/paths.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gua::ops {

/// Environment variable naming a program to run instead of systemctl.
inline constexpr const char* k_systemctl_env = "GUA_SYSTEMCTL";

/// Builds and runs systemctl command lines for one target system.
class Systemctl {
  public:
    /// For the system at `paths.root`; the program is $GUA_SYSTEMCTL, else "systemctl".
    explicit Systemctl(const Paths& paths);

    /// True when systemd manages the target system (<root>/run/systemd/system exists).
    bool booted() const { return m_booted; }
    /// True when `verb` can run: always for enable/disable/is-enabled (offline, with --root
    /// under a root tree); for start, stop, is-active and daemon-reload only on the live system
    /// or through a $GUA_SYSTEMCTL replacement, never the host's systemctl for a --root tree.
    bool can_run(const std::string& verb) const;
    /// The full command line for `verb gua.service` (or just `verb` for daemon-reload).
    std::vector<std::string> argv(const std::string& verb) const;
    /// Runs argv(verb). Call only when can_run(verb).
    CommandResult run(const std::string& verb) const;

    /// `is-enabled`: true/false, nullopt when systemctl gave no usable answer.
    std::optional<bool> is_enabled() const;
    /// `is-active`: "active", "inactive", "failed", "activating", ...; "unknown" when it
    /// cannot be asked.
    std::string is_active() const;

  private:
    std::string m_program;
    std::string m_root;
    bool m_replaced = false;
    bool m_booted = false;
};

} // namespace gua::ops

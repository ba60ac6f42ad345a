// SPDX-License-Identifier: Apache-2.0
// What a `gua start` background daemon is not (persistent across reboots), and the way to make
// recording persistent under the init system in use.
#pragma once

#include "ops/paths.hpp"

#include <string>
#include <vector>

namespace gua::ops {

/// The init system running pid 1, for advice only.
enum class InitSystem { systemd, openrc, runit, s6, sysvinit, container, unknown };

/// Guesses the init system from `proc_root`/1/comm and marker files under `paths` (only on the
/// live system; a --root tree gives unknown).
InitSystem detect_init(const Paths& paths, const std::string& proc_root = "/proc");

/// Lines to print after a background start: who the daemon runs as, where its state lives,
/// that it does not come back after a reboot, and the persistent way for `init` (an @reboot
/// crontab line running `start_command`, or the container's command `daemon_command`).
std::vector<std::string> background_caveats(const Paths& paths, InitSystem init,
                                            const std::string& start_command,
                                            const std::string& daemon_command);

} // namespace gua::ops

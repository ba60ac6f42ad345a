// SPDX-License-Identifier: Apache-2.0
// notify: the facts of a decision as GUA_* environment variables, the configured command run with
// them, and a short message written to the user's terminals.
#pragma once

#include "core/result.hpp"
#include "policy/engine.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::policy {

/// The GUA_* variables of a decision ("NAME=value"): GUA_USER, GUA_UID, GUA_PID, GUA_START_TICKS,
/// GUA_COMMAND, GUA_GPU, GUA_GPU_UUID, GUA_MEMORY_MIB, GUA_IDLE_SECONDS, GUA_RULE, GUA_ACTION,
/// GUA_CONTAINER, GUA_SLURM_JOB, GUA_JUPYTER_KERNEL, GUA_HOST and GUA_MESSAGE.
std::vector<std::string> decision_environment(const Decision& d, const std::string& host);

/// The one-line message shown to the user, e.g. "gua: your process 4242 (python3) has held
/// 8.0 GiB on GPU 0 idle for 2h13m (policy rule "warn-2h"). Please free the GPU."
std::string decision_message(const Decision& d);

/// Starts `/bin/sh -c command` with the current environment plus `extra` (which replaces any
/// GUA_* variables already set), stdin from /dev/null, stdout and stderr inherited, no other
/// descriptor, default signal dispositions, an empty signal mask and no ambient capabilities
/// (clears the calling thread's ambient set). Returns the child's pid; the caller reaps.
Result<pid_t> spawn_shell(const std::string& command, const std::vector<std::string>& extra);

/// Writes `message` to every login terminal in the utmp file `utmp_path` whose device under
/// `dev_root` is a character device owned by `uid` and group-writable (`mesg y`). Needs group tty
/// or CAP_DAC_OVERRIDE (policy/privileges.hpp). Best effort; returns how many were written.
int write_to_terminals(const std::string& utmp_path, const std::string& dev_root, std::uint32_t uid,
                       const std::string& message);

} // namespace gua::policy

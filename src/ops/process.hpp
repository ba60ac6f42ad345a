// SPDX-License-Identifier: Apache-2.0
// Processes as gua's operations see them: a pid plus its start time (so a reused pid is never
// mistaken for the daemon), read from /proc/<pid>/stat.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace gua::ops {

/// A process identified across pid reuse.
struct ProcessId {
    pid_t pid = 0;
    std::uint64_t start_ticks = 0; ///< field 22 of /proc/<pid>/stat (clock ticks since boot)
};

/// What /proc/<pid>/stat says about a process now.
struct ProcessState {
    std::string comm;
    char state = '?'; ///< 'R', 'S', ..., 'Z' for a zombie (exited, not yet reaped)
    std::uint64_t start_ticks = 0;
};

/// Reads /proc/<pid>/stat; nullopt when the pid does not exist.
std::optional<ProcessState> read_process(pid_t pid);

/// The running process `pid` with its start time; nullopt when it does not exist.
std::optional<ProcessId> identify(pid_t pid);

/// True when `id` is still the same live process: it exists, has the same start time and is not
/// a zombie.
bool is_alive(const ProcessId& id);

/// Wall-clock time at which a process with `start_ticks` started (boot time from /proc/stat).
TimeUs start_time(std::uint64_t start_ticks);

/// Sends SIGTERM to `id` (unless it is already gone) and waits until it has exited or `timeout`
/// passed. Returns true when the process is gone (exited, zombie, or pid reused).
bool terminate_and_wait(const ProcessId& id, DurationUs timeout);

} // namespace gua::ops

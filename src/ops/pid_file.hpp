// SPDX-License-Identifier: Apache-2.0
// The background daemon's pid file: the pid on the first line (so `kill $(head -n1 gua.pid)`
// works) and "start_ticks=N" on the second, which tells a live daemon from a reused pid.
#pragma once

#include "ops/process.hpp"

#include <string>

namespace gua::ops {

/// What a pid file says, checked against /proc.
struct PidFileInfo {
    enum class Status {
        absent,  ///< no file
        running, ///< the recorded process is alive
        stale,   ///< the file names a process that is gone, a zombie, or a reused pid
    };
    Status status = Status::absent;
    ProcessId id;
    std::string reason; ///< for stale: why, e.g. "pid 4242 is not running"
};

/// Reads and checks the pid file at `path`. A file that cannot be parsed is stale.
PidFileInfo read_pid_file(const std::string& path);

/// Writes the pid file for `id` atomically (temporary file + rename). Throws Fatal on failure.
void write_pid_file(const std::string& path, const ProcessId& id);

} // namespace gua::ops

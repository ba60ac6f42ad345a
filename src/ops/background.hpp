// SPDX-License-Identifier: Apache-2.0
// Starting the daemon in the background (no systemd, or an unprivileged user): detached into
// its own session, output appended to a log file, readiness reported over the sd_notify
// protocol on a private socket, exactly as systemd would see it.
#pragma once

#include "core/time.hpp"
#include "ops/process.hpp"

#include <string>
#include <vector>

namespace gua::ops {

/// What to start and where its traces go.
struct BackgroundLaunch {
    std::vector<std::string> argv; ///< the daemon command line; argv[0] is the gua binary
    std::string log_file;          ///< stdout and stderr are appended here
    std::string pid_file;          ///< written as soon as the process exists
    DurationUs ready_timeout = 30 * k_us_per_second;
};

/// How a background start ended.
struct LaunchResult {
    enum class Status {
        ready,     ///< the daemon sent READY=1
        exited,    ///< it exited before that (the pid file was removed)
        not_ready, ///< still running, but no READY=1 within the timeout (it may wait for a driver)
        failed,    ///< it could not be started at all
    };
    Status status = Status::failed;
    ProcessId id;
    int exit_code = 0;   ///< for exited: the daemon's exit code
    std::string message; ///< for everything but ready: what happened, with the log's last line
};

/// Starts `launch.argv` in a new session with stdin from /dev/null, cwd /, umask 022, every other
/// descriptor closed, default signal dispositions, an empty signal mask, and NOTIFY_SOCKET pointing
/// at a private socket; writes the pid file; then waits for READY=1, the daemon's exit, or the
/// timeout.
LaunchResult launch_background(const BackgroundLaunch& launch);

/// The last non-empty line of the file at `path` (empty when there is none).
std::string last_log_line(const std::string& path);

} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// Signal handling for the daemon: SIGINT/SIGTERM request a stop, SIGHUP a reload.
#pragma once

#include <atomic>

namespace gua::daemon {

/// Flags set by the signal handlers (the one place gua keeps process-wide mutable state,
/// because a signal handler can reach nothing else).
struct SignalFlags {
    std::atomic<bool> stop{false};
    std::atomic<bool> reload{false};
};

/// Installs handlers (SA_RESTART) for SIGINT, SIGTERM and SIGHUP that set the returned flags;
/// SIGPIPE is ignored. Calling it again returns the same flags (reset to false).
SignalFlags& install_signal_handlers();

} // namespace gua::daemon

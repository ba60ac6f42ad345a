// SPDX-License-Identifier: Apache-2.0
// Signalling a holder from `gua top`: whether the terminal's user may (the process still the one
// shown, its uid the user's unless root, kill(pid, 0) allowed), checked again right before sending.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gua::live {

/// The process a signal is meant for, as `gua top` showed it.
struct SignalTarget {
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> start_ticks; ///< nullopt: unknown, never signalled
    std::string user;
    std::string command;
};

/// Empty when this process may signal `target` now; else why not, in words.
std::string why_not_signal(const SignalTarget& target, const std::string& proc_root = "/proc");

/// Checks again (the uid and start time read right now) and sends `sig`; what happened, in words.
std::string send_signal(const SignalTarget& target, int sig,
                        const std::string& proc_root = "/proc");

/// "SIGTERM", "SIGKILL", else "signal N".
std::string signal_name(int sig);

} // namespace gua::live

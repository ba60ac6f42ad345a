// SPDX-License-Identifier: Apache-2.0
// The checks before `gua top` signals a holder, and the sending.
#include "live/signal.hpp"

#include "live/proc_usage.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace gua::live {

std::string signal_name(int sig) {
    return sig == SIGTERM ? "SIGTERM" : sig == SIGKILL ? "SIGKILL" : fmt::format("signal {}", sig);
}

std::string why_not_signal(const SignalTarget& t, const std::string& proc_root) {
    if (t.pid <= 1) {
        return fmt::format("pid {} is never signalled", t.pid);
    }
    if (!t.start_ticks) {
        return fmt::format("pid {}: its start time is unknown, so it cannot be told from a later "
                           "process with the same pid",
                           t.pid);
    }
    const std::optional<ProcSample> s = read_proc_sample(t.pid, proc_root);
    if (!s) {
        return fmt::format("pid {} has exited", t.pid);
    }
    if (s->start_ticks != *t.start_ticks) {
        return fmt::format("pid {} is now another process", t.pid);
    }
    const uid_t me = getuid();
    if (geteuid() != 0 && (!s->uid || (*s->uid != me && *s->uid != geteuid()))) {
        return fmt::format("pid {} belongs to {}, not to you", t.pid,
                           s->uid ? "uid " + std::to_string(*s->uid) : "an unknown uid");
    }
    if (::kill(static_cast<pid_t>(t.pid), 0) != 0) {
        return fmt::format("pid {}: {}", t.pid, std::strerror(errno));
    }
    return {};
}

std::string send_signal(const SignalTarget& t, int sig, const std::string& proc_root) {
    const std::string why = why_not_signal(t, proc_root);
    if (!why.empty()) {
        return "not sent: " + why;
    }
    if (::kill(static_cast<pid_t>(t.pid), sig) != 0) {
        return fmt::format("not sent: pid {}: {}", t.pid, std::strerror(errno));
    }
    return fmt::format("sent {} to pid {} ({})", signal_name(sig), t.pid, t.user);
}

} // namespace gua::live

// SPDX-License-Identifier: Apache-2.0
// PolicyRunner follow-ups: SIGKILL after the grace period, verification that a terminated
// process's memory was released, and the exit status of notify commands.
#include "core/duration.hpp"
#include "policy/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>

namespace gua::policy {

namespace {

/// True when the driver still lists the process on a card of `tick` (a pid whose start time is
/// unknown counts: it may be ours).
bool listed(const telemetry::Tick& tick, const audit::ProcessKey& key) {
    for (const telemetry::CardTickRecord& c : tick.cards) {
        for (const telemetry::ProcessTick& p : c.processes) {
            if (p.pid == key.pid && (!p.start_ticks || p.start_ticks == key.start_ticks)) {
                return true;
            }
        }
    }
    return false;
}

} // namespace

PolicyRunner::~PolicyRunner() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (const Spawned& s : m_spawned) {
        while (::waitpid(s.pid, nullptr, WNOHANG) == 0 &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
}

void PolicyRunner::follow_up(const telemetry::Tick& tick, TimeUs now) {
    std::erase_if(m_pending, [&](const std::unique_ptr<Pending>& owned) {
        Pending& p = *owned;
        const Candidate& c = p.decision.candidate;
        std::string outcome;
        std::string detail;
        double reclaimed = 0;
        if (p.handle.exited()) {
            if (!listed(tick, c.process)) {
                outcome = "released";
                reclaimed =
                    static_cast<double>(c.memory_mib.value_or(0)) / 1024.0 * to_hours(c.idle_us);
                detail = fmt::format("{} after {}; memory released",
                                     p.sigkill_sent ? "killed" : "exited",
                                     format_duration(now - p.sigterm_at));
            } else if (++p.ticks_after_exit >= 2) {
                outcome = "exited-memory-held";
                detail = "the process exited but the driver still lists its memory";
            }
        } else if (!p.sigkill_sent && now >= p.sigterm_at + p.decision.grace_us) {
            const Result<void> same = p.handle.uid_unchanged();
            const Result<void> sent = same ? p.handle.send(SIGKILL) : same;
            p.sigkill_sent = true;
            const bool changed = !same && same.error().kind != ErrorKind::gone;
            outcome = sent ? "sigkill-sent" : changed ? "uid-changed" : "signal-failed";
            detail = sent      ? fmt::format("still running {} after SIGTERM; SIGKILL sent",
                                             format_duration(now - p.sigterm_at))
                     : changed ? "SIGKILL not sent: " + same.error().message
                               : "SIGKILL failed: " + sent.error().message;
            m_log.update(p.decision_id, outcome, detail, 0, now);
            m_log_line(fmt::format("policy: pid {} {}", c.process.pid, detail));
            return !sent.ok();
        } else if (p.sigkill_sent && ++p.ticks_after_kill >= 3) {
            outcome = "still-running";
            detail = "the process survived SIGKILL (uninterruptible?)";
        }
        if (outcome.empty()) {
            return false;
        }
        m_log.update(p.decision_id, outcome, detail, reclaimed, now);
        m_log_line(fmt::format("policy: pid {} ({}) terminated by rule {}: {} ({})", c.process.pid,
                               c.identity.command, p.decision.rule, outcome, detail));
        return true;
    });
}

void PolicyRunner::reap_notifications(TimeUs now) {
    std::erase_if(m_spawned, [&](const Spawned& s) {
        int status = 0;
        const pid_t done = ::waitpid(s.pid, &status, WNOHANG);
        if (done == 0 || (done < 0 && errno == EINTR)) {
            return false;
        }
        if (done == s.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            return true;
        }
        const std::string detail =
            done == s.pid && WIFEXITED(status)
                ? fmt::format("notify command exited with status {}", WEXITSTATUS(status))
                : std::string("notify command did not finish normally");
        m_log.update(s.decision_id, "notify-failed", detail, 0, now);
        m_log_line("policy: " + detail);
        return true;
    });
}

} // namespace gua::policy

// SPDX-License-Identifier: Apache-2.0
// PolicyRunner: the daemon's policy loop — streaks from history at start, then per tick: fold the
// tick, follow up terminations, decide, act, and record every decision in the database.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/streak.hpp"
#include "policy/accounts.hpp"
#include "policy/engine.hpp"
#include "policy/process_handle.hpp"
#include "store/database.hpp"
#include "store/policy_log.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::policy {

/// Where the runner finds processes and terminals (tests point these elsewhere).
struct RunnerOptions {
    std::string proc_root = "/proc";
    std::string utmp_path = "/var/run/utmp";
    std::string dev_root = "/dev";
    std::string host;
    std::uint32_t self_pid = 0;
    /// Hands a notify decision to the configured mail and webhook transports (the daemon's
    /// delivery queue: returns at once). Empty: none configured.
    std::function<void(const Decision&)> deliver;
};

/// Runs the policy on one thread alongside the writer. Does nothing while the policy is disabled.
class PolicyRunner {
  public:
    using LogFn = std::function<void(const std::string&)>;

    /// `db` must be migrated and outlive the runner; `log` receives one line per decision.
    PolicyRunner(store::Database& db, PolicyConfig config, audit::Thresholds thresholds, LogFn log,
                 RunnerOptions options);
    /// Waits up to 2 s for notify commands still running (never signals them).
    ~PolicyRunner();
    PolicyRunner(const PolicyRunner&) = delete;
    PolicyRunner& operator=(const PolicyRunner&) = delete;

    /// Seeds the streaks from the recorded history and what already fired (or acted within the
    /// last hour) from the decision log, so that both survive a daemon restart.
    void start(TimeUs now);
    /// Handles one recorded tick at wall time `now`. Database errors propagate as Fatal.
    void on_tick(const telemetry::Tick& tick, TimeUs now);
    /// Replaces configuration and thresholds (SIGHUP); starts the policy if it was off.
    void configure(PolicyConfig config, audit::Thresholds thresholds, TimeUs now);
    /// Terminations still being followed up.
    std::size_t pending_terminations() const { return m_pending.size(); }

  private:
    struct Pending {
        std::int64_t decision_id = 0;
        ProcessHandle handle;
        Decision decision;
        TimeUs sigterm_at = 0;
        bool sigkill_sent = false;
        int ticks_after_exit = 0;
        int ticks_after_kill = 0;
    };
    struct Spawned {
        pid_t pid = -1;
        std::int64_t decision_id = 0;
    };

    /// Logs one warning per action that configured rules use and this thread cannot perform.
    void warn_missing_privileges();
    void execute(Decision& d, TimeUs now);
    std::string notify(const Decision& d, std::int64_t& spawned_pid);
    std::string terminate(const Decision& d, TimeUs now, std::string& detail,
                          std::unique_ptr<Pending>& pending);
    void follow_up(const telemetry::Tick& tick, TimeUs now);
    void reap_notifications(TimeUs now);
    void log_decision(const Decision& d, const std::string& outcome, const std::string& detail);

    store::Database& m_db;
    store::DecisionLog m_log;
    Engine m_engine;
    audit::Thresholds m_thresholds;
    LogFn m_log_line;
    RunnerOptions m_options;
    Accounts m_accounts;
    audit::StreakBook m_book;
    bool m_started = false;
    std::vector<std::unique_ptr<Pending>> m_pending;
    std::vector<Spawned> m_spawned;
};

} // namespace gua::policy

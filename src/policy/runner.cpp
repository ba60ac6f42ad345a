// SPDX-License-Identifier: Apache-2.0
// PolicyRunner: seeding, deciding and acting (follow-ups are in runner_follow_up.cpp).
#include "policy/runner.hpp"

#include "audit/holdings.hpp"
#include "core/duration.hpp"
#include "core/units.hpp"
#include "identity/user.hpp"
#include "policy/candidates.hpp"
#include "policy/notify.hpp"
#include "policy/privileges.hpp"
#include "store/recent.hpp"

#include <fmt/format.h>

#include <csignal>

namespace gua::policy {

namespace {

std::string join_gpus(const std::vector<GpuRef>& gpus, bool uuids) {
    std::string out;
    for (const GpuRef& g : gpus) {
        out += (out.empty() ? "" : ",") + (uuids ? g.uuid : std::to_string(g.index));
    }
    return out;
}

store::DecisionRow row_of(const Decision& d, TimeUs now) {
    const Candidate& c = d.candidate;
    store::DecisionRow r;
    r.time_us = now;
    r.rule = d.rule;
    r.action = to_string(d.action);
    r.dry_run = d.dry_run;
    r.verdict = to_string(d.verdict);
    r.pid = c.process.pid;
    r.start_ticks = c.process.start_ticks;
    r.user = c.identity.user;
    r.uid = c.identity.uid;
    r.command = c.identity.command;
    r.container_id = c.identity.container_id;
    r.gpu_uuid = join_gpus(c.gpus, true);
    r.gpu_index = join_gpus(c.gpus, false);
    r.memory_mib = c.memory_mib;
    r.idle_us = c.idle_us;
    r.updated_us = now;
    return r;
}

/// Names of the rules (dry run or not) that use `action`, comma-separated.
std::string rules_using(const PolicyConfig& config, Action action) {
    std::string out;
    for (const Rule& r : config.rules) {
        if (r.action == action) {
            out += (out.empty() ? "" : ", ") + r.name;
        }
    }
    return out;
}

} // namespace

void PolicyRunner::warn_missing_privileges() {
    // The calling thread's credentials are the ones that act (capabilities are per thread).
    const Result<Credentials> self = read_credentials(m_options.proc_root + "/thread-self/status");
    if (!self || !m_engine.config().enabled) {
        return;
    }
    for (const Action action : {Action::notify, Action::terminate}) {
        const std::string rules = rules_using(m_engine.config(), action);
        const std::optional<std::string> missing =
            rules.empty() ? std::nullopt : missing_privilege(action, self.value(), tty_group());
        if (missing) {
            m_log_line(fmt::format("policy: warning: {} (rule {}) will fail on other users: {}; "
                                   "it needs {} (`gua doctor` shows how to grant it)",
                                   to_string(action), rules, *missing, required_privilege(action)));
        }
    }
}

PolicyRunner::PolicyRunner(store::Database& db, PolicyConfig config, audit::Thresholds thresholds,
                           LogFn log, RunnerOptions options)
    : m_db(db), m_log(db), m_engine(std::move(config), options.self_pid), m_thresholds(thresholds),
      m_log_line(std::move(log)), m_options(std::move(options)) {}

void PolicyRunner::start(TimeUs now) {
    if (m_started) {
        return;
    }
    if (!m_engine.config().enabled) {
        if (!m_engine.config().rules.empty()) {
            m_log_line(fmt::format("policy: off ([policy] enabled = false); {} rule{} not applied",
                                   m_engine.config().rules.size(),
                                   m_engine.config().rules.size() == 1 ? "" : "s"));
        }
        return;
    }
    m_started = true;
    const store::RecentState recent = store::read_recent(m_db);
    const std::size_t seeded = store::seed_streaks(m_db, recent.cards, m_thresholds, m_book);
    for (const store::DecisionRow& r : store::read_decisions(m_db, 0, now + 1)) {
        if (r.verdict != to_string(Verdict::rate_limited)) {
            m_engine.remember_fired(audit::ProcessKey{r.pid, r.start_ticks}, r.rule);
        }
        if (r.verdict == to_string(Verdict::act) && r.action != to_string(Action::log) &&
            r.time_us > now - k_us_per_hour) {
            m_engine.remember_action(r.time_us);
        }
    }
    m_log_line(fmt::format("policy: on, {} rule{}, at most {} actions per hour; {} idle-held "
                           "streak{} resumed from history",
                           m_engine.config().rules.size(),
                           m_engine.config().rules.size() == 1 ? "" : "s",
                           m_engine.config().max_actions_per_hour, seeded, seeded == 1 ? "" : "s"));
    warn_missing_privileges();
}

void PolicyRunner::configure(PolicyConfig config, audit::Thresholds thresholds, TimeUs now) {
    m_engine.configure(std::move(config));
    m_thresholds = thresholds;
    const bool was_started = m_started;
    start(now);
    if (was_started) {
        warn_missing_privileges();
    }
}

void PolicyRunner::on_tick(const telemetry::Tick& tick, TimeUs now) {
    if (!m_started) {
        return;
    }
    const std::vector<audit::CardNow> cards = audit::cards_of(tick);
    audit::observe(m_book, cards, m_thresholds);
    std::vector<Candidate> candidates = idle_candidates(cards, m_book, m_thresholds);
    for (Candidate& c : candidates) {
        c.owner = m_accounts.owner(c.identity.uid, now);
        c.groups = m_accounts.groups(c.identity.user, now);
    }
    std::vector<Decision> decisions = m_engine.decide(candidates, now);
    if (decisions.empty() && m_pending.empty() && m_spawned.empty()) {
        return; // nothing to record: no write transaction this tick
    }
    store::Transaction tx(m_db);
    reap_notifications(now);
    follow_up(tick, now);
    for (Decision& d : decisions) {
        execute(d, now);
    }
    tx.commit();
}

void PolicyRunner::execute(Decision& d, TimeUs now) {
    store::DecisionRow row = row_of(d, now);
    std::unique_ptr<Pending> pending;
    std::int64_t spawned = -1;
    switch (d.verdict) {
    case Verdict::dry_run:
        row.outcome = "dry-run";
        row.detail = d.action == Action::terminate
                         ? fmt::format("would send SIGTERM, then SIGKILL after {}",
                                       format_duration(d.grace_us))
                         : fmt::format("would {}", to_string(d.action));
        break;
    case Verdict::exempt:
    case Verdict::protect:
    case Verdict::rate_limited:
        row.outcome = to_string(d.verdict);
        row.detail = d.reason;
        break;
    case Verdict::act:
        if (d.action == Action::log) {
            row.outcome = "logged";
        } else if (d.action == Action::notify) {
            row.outcome = notify(d, spawned);
            row.detail = spawned >= 0 ? fmt::format("notify command pid {}", spawned) : "";
        } else {
            row.outcome = terminate(d, now, row.detail, pending);
        }
        break;
    }
    const std::int64_t id = m_log.insert(row);
    if (pending) {
        pending->decision_id = id;
        m_pending.push_back(std::move(pending));
    }
    if (spawned >= 0) {
        m_spawned.push_back(Spawned{static_cast<pid_t>(spawned), id});
    }
    log_decision(d, row.outcome, row.detail);
}

std::string PolicyRunner::notify(const Decision& d, std::int64_t& spawned_pid) {
    const std::string message = decision_message(d);
    const Candidate& c = d.candidate;
    const std::optional<std::uint32_t> person =
        identity::attributed_uid(c.identity.uid, c.identity.login_uid);
    if (person) {
        write_to_terminals(m_options.utmp_path, m_options.dev_root, *person, message);
    }
    if (m_options.deliver) {
        m_options.deliver(d); // queued: mail and webhooks never hold up the tick
    }
    const std::string& command = m_engine.config().notify_command;
    if (command.empty()) {
        return "notified";
    }
    const Result<pid_t> pid = spawn_shell(command, decision_environment(d, m_options.host));
    if (!pid) {
        m_log_line("policy: notify command failed: " + pid.error().message);
        return "notify-failed";
    }
    spawned_pid = pid.value();
    return "notified";
}

std::string PolicyRunner::terminate(const Decision& d, TimeUs now, std::string& detail,
                                    std::unique_ptr<Pending>& pending) {
    for (const auto& p : m_pending) {
        if (p->handle.process() == d.candidate.process) {
            detail = "already being terminated";
            return "already-terminating";
        }
    }
    // Re-check pid and start time immediately before acting: a reused pid is never signalled.
    Result<ProcessHandle> handle =
        ProcessHandle::open(m_options.proc_root, d.candidate.process, d.candidate.identity.uid);
    if (!handle) {
        detail = "not signalled: " + handle.error().message;
        return handle.error().kind == ErrorKind::gone ? "gone" : "pid-reused";
    }
    if (auto same = handle.value().uid_unchanged(); !same) {
        detail = "not signalled: " + same.error().message;
        return same.error().kind == ErrorKind::gone ? "gone" : "uid-changed";
    }
    if (auto sent = handle.value().send(SIGTERM); !sent) {
        detail = "SIGTERM failed: " + sent.error().message;
        const Result<Credentials> self =
            read_credentials(m_options.proc_root + "/thread-self/status");
        if (const std::optional<std::string> missing =
                self ? missing_privilege(Action::terminate, self.value(), std::nullopt)
                     : std::nullopt) {
            detail += " (" + *missing + "; see `gua doctor`)";
        }
        return "signal-failed";
    }
    detail =
        fmt::format("SIGTERM sent; SIGKILL after {} if still running", format_duration(d.grace_us));
    pending = std::make_unique<Pending>(Pending{0, std::move(handle).value(), d, now, false, 0, 0});
    return "sigterm-sent";
}

void PolicyRunner::log_decision(const Decision& d, const std::string& outcome,
                                const std::string& detail) {
    const Candidate& c = d.candidate;
    m_log_line(fmt::format("policy: rule {} {}{} {} pid {} ({}) {} idle {} on GPU {}: {}{}", d.rule,
                           to_string(d.action), d.dry_run ? " (dry run)" : "", c.identity.user,
                           c.process.pid, c.identity.command,
                           c.memory_mib ? format_gib(static_cast<double>(*c.memory_mib))
                                        : std::string("memory"),
                           format_duration(c.idle_us), join_gpus(c.gpus, false), outcome,
                           detail.empty() ? "" : " (" + detail + ")"));
}

} // namespace gua::policy

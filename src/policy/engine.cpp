// SPDX-License-Identifier: Apache-2.0
// The policy engine: exemptions and protections first, then dry run, then the rate limit.
#include "policy/engine.hpp"

#include "identity/user.hpp"
#include "policy/match.hpp"

#include <algorithm>

namespace gua::policy {

namespace {

/// Idle-held MiB × µs: the order in which candidates are considered (worst first).
double weight(const Candidate& c) {
    return static_cast<double>(c.memory_mib.value_or(0)) * static_cast<double>(c.idle_us);
}

} // namespace

const char* to_string(Verdict verdict) {
    switch (verdict) {
    case Verdict::dry_run:
        return "dry-run";
    case Verdict::exempt:
        return "exempt";
    case Verdict::protect:
        return "protected";
    case Verdict::rate_limited:
        return "rate-limited";
    case Verdict::act:
        break;
    }
    return "act";
}

Engine::Engine(PolicyConfig config, std::uint32_t self_pid)
    : m_config(std::move(config)), m_self_pid(self_pid) {}

void Engine::configure(PolicyConfig config) {
    m_config = std::move(config);
}

void Engine::remember_fired(const audit::ProcessKey& process, const std::string& rule) {
    m_fired.emplace(process, rule);
}

void Engine::remember_action(TimeUs at) {
    m_actions.insert(std::upper_bound(m_actions.begin(), m_actions.end(), at), at);
}

std::optional<std::pair<Verdict, std::string>> Engine::held_back(const Candidate& c,
                                                                 const Rule& rule) const {
    const telemetry::Identity& id = c.identity;
    if (matches_any(m_config.exempt_users, id.user)) {
        return std::pair{Verdict::exempt, "exempt user " + id.user};
    }
    if (matches_any(m_config.exempt_commands, id.command)) {
        return std::pair{Verdict::exempt, "exempt command " + id.command};
    }
    if (container_matches(m_config.exempt_containers, id.container_id)) {
        return std::pair{Verdict::exempt, "exempt container " + id.container_id.substr(0, 12)};
    }
    if (c.process.pid <= 1 || c.process.pid == m_self_pid) {
        return std::pair{Verdict::protect, "system process"};
    }
    if (!c.process.start_ticks) {
        return std::pair{Verdict::protect, "start time unknown (cannot rule out pid reuse)"};
    }
    const bool system_user = !id.uid || *id.uid < identity::k_first_person_uid;
    if (system_user &&
        std::find(rule.users.begin(), rule.users.end(), c.owner) == rule.users.end()) {
        return std::pair{Verdict::protect,
                         "runs as " + c.owner + " (uid < 1000), not named by the rule"};
    }
    return std::nullopt;
}

std::vector<Decision> Engine::decide(const std::vector<Candidate>& candidates, TimeUs now) {
    std::vector<Decision> out;
    if (!m_config.enabled) {
        return out;
    }
    while (!m_actions.empty() && m_actions.front() <= now - k_us_per_hour) {
        m_actions.pop_front();
    }
    std::vector<const Candidate*> order;
    order.reserve(candidates.size());
    for (const Candidate& c : candidates) {
        order.push_back(&c);
    }
    std::stable_sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) {
        return weight(*a) > weight(*b);
    });
    std::vector<const Rule*> rules;
    rules.reserve(m_config.rules.size());
    for (const Rule& r : m_config.rules) {
        rules.push_back(&r);
    }
    std::stable_sort(rules.begin(), rules.end(),
                     [](const Rule* a, const Rule* b) { return a->after_us < b->after_us; });

    for (const Candidate* c : order) {
        for (const Rule* rule : rules) {
            const auto key = std::pair{c->process, rule->name};
            if (c->idle_us < rule->after_us || m_fired.contains(key) || !rule_matches(*rule, *c)) {
                continue;
            }
            Decision d{*c,           rule->name, rule->action, rule->dry_run, rule->grace_us,
                       Verdict::act, {}};
            if (const auto held = held_back(*c, *rule)) {
                d.verdict = held->first;
                d.reason = held->second;
            } else if (rule->dry_run) {
                d.verdict = Verdict::dry_run;
            } else if (rule->action != Action::log &&
                       std::ssize(m_actions) >= m_config.max_actions_per_hour) {
                if (!m_rate_noted.insert(key).second) {
                    continue;
                }
                d.verdict = Verdict::rate_limited;
                d.reason = "max_actions_per_hour reached";
                out.push_back(std::move(d));
                continue;
            } else if (rule->action != Action::log) {
                m_actions.push_back(now);
            }
            m_fired.insert(key);
            out.push_back(std::move(d));
        }
    }
    return out;
}

} // namespace gua::policy

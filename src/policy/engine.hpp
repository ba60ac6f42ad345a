// SPDX-License-Identifier: Apache-2.0
// The policy engine: a pure decision function from idle-held processes, rules and the clock to
// decisions (which rule fires on which process, and whether it acts, only records, or is held
// back by an exemption, a protection or the rate limit).
#pragma once

#include "audit/streak.hpp"
#include "policy/rule.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gua::policy {

/// A card a candidate idle-holds.
struct GpuRef {
    int index = 0;
    std::string uuid;
};

/// One process idle-holding memory on one or more cards, as the engine sees it.
struct Candidate {
    audit::ProcessKey process;
    telemetry::Identity identity;    ///< user = the attributed person; uid = the real uid
    std::string owner;               ///< account of the real uid (passwd name, "uid:N", "unknown")
    std::vector<std::string> groups; ///< Unix groups of the attributed user
    std::vector<GpuRef> gpus;        ///< the cards it idle-holds
    std::optional<std::int64_t> memory_mib; ///< idle-held memory over those cards; nullopt: unknown
    DurationUs idle_us = 0;                 ///< continuous idle-held time (shortest over its cards)
    TimeUs idle_since = 0;                  ///< start of that streak
};

/// What happens with a decision.
enum class Verdict : std::uint8_t {
    act,          ///< carry out the rule's action
    dry_run,      ///< record what would happen, do nothing
    exempt,       ///< an exempt user, command or container: recorded, never acted upon
    protect,      ///< root/system user not named by the rule, gua itself, or start time unknown
    rate_limited, ///< over max_actions_per_hour: recorded once, retried on later ticks
};

/// "act", "dry-run", "exempt", "protected" or "rate-limited".
const char* to_string(Verdict verdict);

/// One rule firing on one candidate.
struct Decision {
    Candidate candidate;
    std::string rule;
    Action action = Action::log;
    bool dry_run = true;
    DurationUs grace_us = 0;
    Verdict verdict = Verdict::act;
    std::string reason; ///< why it was held back (exempt/protect/rate_limited); empty for act
};

/// Decides, tick by tick. Each (process, rule) fires once; rules of one process escalate in order
/// of `after`. Pure apart from its own memory; not thread-safe.
class Engine {
  public:
    /// `self_pid` is gua's own pid (never acted upon).
    Engine(PolicyConfig config, std::uint32_t self_pid);
    /// Replaces the configuration (SIGHUP), keeping what already fired and the action history.
    void configure(PolicyConfig config);
    const PolicyConfig& config() const { return m_config; }
    /// Marks (process, rule) as already fired (decisions recorded before a restart).
    void remember_fired(const audit::ProcessKey& process, const std::string& rule);
    /// Counts an action taken at `at` towards the rate limit (actions recorded before a restart).
    void remember_action(TimeUs at);
    /// The decisions due at `now` for `candidates`, worst first (idle-held memory × time).
    /// Decisions that act on notify/terminate count towards the rate limit.
    std::vector<Decision> decide(const std::vector<Candidate>& candidates, TimeUs now);

  private:
    std::optional<std::pair<Verdict, std::string>> held_back(const Candidate& c,
                                                             const Rule& rule) const;

    PolicyConfig m_config;
    std::uint32_t m_self_pid;
    std::set<std::pair<audit::ProcessKey, std::string>> m_fired;
    std::set<std::pair<audit::ProcessKey, std::string>> m_rate_noted;
    std::deque<TimeUs> m_actions;
};

} // namespace gua::policy

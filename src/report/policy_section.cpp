// SPDX-License-Identifier: Apache-2.0
// The Policy section: aggregation of policy_decision rows and its text and JSON forms.
#include "report/policy_section.hpp"

#include <fmt/format.h>

#include <map>

namespace gua::report {

namespace {

bool acted(const std::string& outcome) {
    return outcome == "logged" || outcome == "notified" || outcome == "sigterm-sent" ||
           outcome == "sigkill-sent" || outcome == "released" || outcome == "exited-memory-held" ||
           outcome == "still-running";
}

} // namespace

std::optional<PolicySummary> summarize_policy(const std::vector<store::DecisionRow>& decisions,
                                              const std::optional<std::string>& user,
                                              const std::optional<std::string>& gpu_uuid) {
    PolicySummary s;
    std::map<std::string, PolicyRuleRow> rules;
    for (const store::DecisionRow& d : decisions) {
        if ((user && d.user != *user) ||
            (gpu_uuid && d.gpu_uuid.find(*gpu_uuid) == std::string::npos)) {
            continue;
        }
        ++s.decisions;
        PolicyRuleRow& row = rules[d.rule];
        row.rule = d.rule;
        row.action = d.action;
        if (d.verdict == "dry-run") {
            ++row.dry_runs;
            ++s.dry_runs;
        } else if (d.verdict != "act") {
            ++row.held_back;
        } else if (acted(d.outcome)) {
            ++row.acted;
            s.notified += d.action == "notify" ? 1 : 0;
        } else {
            ++row.failed;
        }
        if (d.outcome == "released") {
            ++row.released;
            ++s.terminated;
        }
        row.reclaimed_gib_hours += d.reclaimed_gib_hours;
        s.reclaimed_gib_hours += d.reclaimed_gib_hours;
    }
    if (s.decisions == 0) {
        return std::nullopt;
    }
    for (auto& [name, row] : rules) {
        s.rules.push_back(row);
    }
    return s;
}

std::string render_policy_text(const PolicySummary& p) {
    std::string out = "Policy\n";
    out += "  rule               action     acted  dry-run  held back  failed  released  "
           "GiB-hours reclaimed\n";
    for (const PolicyRuleRow& r : p.rules) {
        out += fmt::format("  {:<18} {:<9} {:>6}  {:>7}  {:>9}  {:>6}  {:>8}  {:>19.2f}\n",
                           r.rule.substr(0, 18), r.action, r.acted, r.dry_runs, r.held_back,
                           r.failed, r.released, r.reclaimed_gib_hours);
    }
    out += fmt::format("  {} decision{}: {} notification{}, {} termination{} that released "
                       "memory, {} dry run{}; {:.2f} GiB-hours reclaimed (estimate: memory × "
                       "idle time at release)\n",
                       p.decisions, p.decisions == 1 ? "" : "s", p.notified,
                       p.notified == 1 ? "" : "s", p.terminated, p.terminated == 1 ? "" : "s",
                       p.dry_runs, p.dry_runs == 1 ? "" : "s", p.reclaimed_gib_hours);
    return out;
}

nlohmann::json policy_json(const PolicySummary& p) {
    nlohmann::json rules = nlohmann::json::array();
    for (const PolicyRuleRow& r : p.rules) {
        rules.push_back({{"rule", r.rule},
                         {"action", r.action},
                         {"acted", r.acted},
                         {"dry_runs", r.dry_runs},
                         {"held_back", r.held_back},
                         {"failed", r.failed},
                         {"released", r.released},
                         {"reclaimed_gib_hours", r.reclaimed_gib_hours}});
    }
    return {{"decisions", p.decisions},
            {"notified", p.notified},
            {"terminated", p.terminated},
            {"dry_runs", p.dry_runs},
            {"reclaimed_gib_hours", p.reclaimed_gib_hours},
            {"rules", rules}};
}

} // namespace gua::report

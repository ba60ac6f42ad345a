// SPDX-License-Identifier: Apache-2.0
// The report's "Policy" section: what the idle-held policy decided in the window, per rule, and
// the GiB-hours its terminations reclaimed.
#pragma once

#include "store/policy_log.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// One rule's decisions in the window.
struct PolicyRuleRow {
    std::string rule;
    std::string action;      ///< log | notify | terminate
    std::uint64_t acted = 0; ///< carried out (logged, notified, or signalled)
    std::uint64_t dry_runs = 0;
    std::uint64_t held_back = 0; ///< exempt, protected or rate-limited
    std::uint64_t failed = 0;    ///< notify-failed, pid-reused, gone, signal-failed, …
    std::uint64_t released = 0;  ///< terminations whose memory the driver released
    double reclaimed_gib_hours = 0;
};

/// The Policy section.
struct PolicySummary {
    std::uint64_t decisions = 0;
    std::vector<PolicyRuleRow> rules; ///< by rule name
    std::uint64_t notified = 0;       ///< real notify actions
    std::uint64_t terminated = 0;     ///< real terminations that released memory
    std::uint64_t dry_runs = 0;
    double reclaimed_gib_hours = 0;
};

/// Summarises `decisions`, keeping only those of `user` and touching GPU `gpu_uuid` when given;
/// nullopt when none remain (the section is then left out).
std::optional<PolicySummary> summarize_policy(const std::vector<store::DecisionRow>& decisions,
                                              const std::optional<std::string>& user,
                                              const std::optional<std::string>& gpu_uuid);

/// The text section, starting with its "Policy" title line.
std::string render_policy_text(const PolicySummary& policy);

/// The "policy" object of the JSON report (docs/report-json.md).
nlohmann::json policy_json(const PolicySummary& policy);

} // namespace gua::report

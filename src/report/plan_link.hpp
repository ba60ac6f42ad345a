// SPDX-License-Identifier: Apache-2.0
// `gua report --plan`: the replay's figures (`gua plan`) that §8's idle-culling and gpu-sharing
// remedies carry, and their text, JSON and HTML. Pure data; the CLI fills it from a plan run.
#pragma once

#include "core/time.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit {
struct Recommendation;
}

namespace gua::report {

struct ReportModel;

/// One replayed scenario (an idle timeout and a sharing mode), summed over card models. The
/// headline figures are the relaunch band's (the upper bound); `_drop` the other bound.
struct PlanLinkScenario {
    std::optional<DurationUs> idle_timeout; ///< nullopt: no timeout
    std::string share;                      ///< "exclusive", "mig" or "mps"
    int gpus_recorded = 0;
    int gpus_needed = 0;
    int gpus_needed_drop = 0;
    bool objective_met = true;
    int peak_gpus = 0;
    int p99_gpus = 0;
    int p95_gpus = 0;
    int gpus_released = 0;
    int gpus_released_drop = 0;
    std::int64_t monthly_cents = 0; ///< the released cards at §7's prices, 30-day months
    std::int64_t monthly_cents_drop = 0;
    std::int64_t sessions_cut = 0;
    std::int64_t sessions_resumed = 0;
    double mps_slowdown = 1.0; ///< time-weighted stretch of MPS co-runners (1 otherwise)
    std::optional<DurationUs> interactive_p95_wait; ///< at gpus_needed
    std::optional<DurationUs> batch_p95_wait;
};

/// What the replay rests on, printed with its figures.
struct PlanLinkConfidence {
    DurationUs window_us = 0;
    DurationUs recorded_us = 0; ///< wall time with raw card-ticks
    double unmeasured_share = 0;
    double snapshot_share = 0;
    double unattributed_share = 0;
    std::int64_t units = 0;
    std::int64_t card_ticks = 0;
    std::optional<DurationUs> raw_retention_us; ///< nullopt: raw ticks kept without limit
    std::vector<std::string> notes;             ///< `gua plan`'s confidence lines
};

/// The plan a report was asked to link (`--plan`): the timeout the culling remedy uses and why,
/// and the scenarios no timeout / that timeout × exclusive, MIG, MPS.
struct PlanLink {
    DurationUs idle_timeout_us = k_us_per_hour;
    std::string idle_timeout_basis; ///< e.g. "no terminating [[policy.rule]]: 1h by default"
    std::string currency;
    std::string unavailable; ///< why no plan was replayed (no raw card-ticks); empty when it was
    std::vector<PlanLinkScenario> scenarios;
    PlanLinkConfidence confidence;
};

/// The scenarios of `link` that remedy `id` carries: idle-culling, no timeout and the timeout
/// (exclusive); gpu-sharing, MIG and MPS without and with the timeout; none for other rules.
std::vector<const PlanLinkScenario*> plan_scenarios_for(const PlanLink& link,
                                                        const std::string& id);

/// Appends the plan lines of remedy `r` (text §8) when the report has a plan for it.
void plan_link_text(std::string& out, const ReportModel& m, const audit::Recommendation& r);
/// Adds `plan` to the JSON of remedy `r` when the report has a plan for it.
void plan_link_json(nlohmann::json& item, const ReportModel& m, const audit::Recommendation& r);
/// Puts the plan paragraph of remedy `i` inside its article (HTML §8), when it has one.
void plan_link_html(std::string& out, const ReportModel& m, std::size_t i);

} // namespace gua::report

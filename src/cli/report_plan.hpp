// SPDX-License-Identifier: Apache-2.0
// `gua report --plan`: replays the report's window under §8's culling and sharing remedies
// (src/plan) and hands the figures to the report (report::PlanLink).
#pragma once

#include "cli/report_options.hpp"
#include "plan/sweep.hpp"
#include "policy/rule.hpp"
#include "report/plan_link.hpp"
#include "store/database.hpp"

#include <string>

namespace gua::cli {

/// The idle timeout the culling remedy is replayed at, and why that one.
struct PlanTimeout {
    DurationUs us = k_us_per_hour;
    std::string basis;
};

/// The shortest `after` of the [[policy.rule]] entries that terminate idle holders when
/// [policy] is enabled (dry-run rules included: they state the timeout the site means to use);
/// else one hour. `basis` says which.
PlanTimeout culling_timeout(const policy::PolicyConfig& policy);

/// The plan options of the link: no timeout and `timeout`, each exclusive, MIG and MPS.
plan::PlanOptions link_options(DurationUs timeout, const audit::Pricing& pricing);

/// The figures of `result` (run with link_options) that §8 shows.
report::PlanLink plan_link_of(const plan::PlanResult& result, const PlanTimeout& timeout);

/// Loads the raw card-ticks of `options`' window and filters from `db` once and replays them;
/// a window without raw card-ticks gives a link that says so (the report itself stands).
report::PlanLink replay_for_report(store::Database& db, const report::BuildOptions& options,
                                   const config::Config& cfg);

/// print_report with §8 linked to the plan (`gua report --plan`).
int print_report_with_plan(const std::string& db_path, report::BuildOptions options,
                           const ReportFlags& flags, const config::Config& cfg);

} // namespace gua::cli

// SPDX-License-Identifier: Apache-2.0
// Text sections rendered outside text.cpp: §7 cost, §8 recommendations, §9 health, money
// formatting and how the card time was measured.
#pragma once

#include "report/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gua::report {

/// Formats cents in `currency`: "$1,234.56" for USD (also € EUR, £ GBP), else "CHF 1,234.56".
std::string format_money(std::int64_t cents, const std::string& currency);

/// A price from micro-units: "$2.00", or "$2.4567" when it has sub-cent digits.
std::string format_micros(std::int64_t micros, const std::string& currency);

/// Appends §7 Cost.
void render_cost_text(std::string& out, const ReportModel& m);

/// §7's shares of the spend in percent, rounded to 0.1 so that they sum to 100: active,
/// idle-held, truly idle, then allocated-unused when `alloc`.
std::vector<double> spend_percentages(const audit::StateCost& t, bool alloc);

/// Appends §8 Recommendations, ending with the one-line combination of their savings.
void render_recommendations_text(std::string& out, const ReportModel& m);

/// "98.2% from driver sample buffers, 1.8% snapshots": the non-zero provenance shares.
std::string source_summary(const ProvenanceShares& p);

/// The error bound of snapshot readings, empty when there were none.
std::string snapshot_caveat(const ProvenanceShares& p);

/// Why time is unmeasured: its parts in GPU-hours with their causes, "; "-separated.
std::string unmeasured_reasons(const ProvenanceShares& p);

/// Appends §9 Health ("n/a" for every figure without a reading).
void render_health_text(std::string& out, const ReportModel& m);

/// Appends the provenance lines of Data coverage (sources, unmeasured, overlap, per GPU).
void render_provenance_text(std::string& out, const ReportModel& m);

/// The state shares in percent with one decimal, rounded so that they add up to 100: active,
/// idle-held, truly idle, unmeasured, and (a fifth, only when `allocations`) allocated-unused;
/// where time was lost to faults, allocated-unused (0 without allocations) and that (a sixth).
std::vector<double> state_percentages(const StateShares& s, bool allocations);

/// Appends §4's allocated-unused time by owner (a job's user, a pod's namespace).
void render_allocation_owners_text(std::string& out, const AllocationSection& a);

/// Appends §4 by job (`--group-by job`): one line per job, most allocated GPU-hours first.
void render_jobs_text(std::string& out, const ReportModel& m);

/// Appends the Allocations section: the allocation matrix and use outside the scheduler.
void render_allocation_text(std::string& out, const ReportModel& m);

/// The verdict's line: the 20 % rule, or what unmeasured time and snapshots leave open.
std::string verdict_text(const ReportModel& m);

/// Card-time lost to faults (docs/faults.md), each empty without any: §1's line (names padded
/// to `name_width`), §2's line, and §3's line per card that lost time.
std::string fault_loss_headline_text(const ReportModel& m, int name_width);
std::string fault_loss_waste_text(const ReportModel& m);
std::string fault_loss_gpus_text(const ReportModel& m);

} // namespace gua::report

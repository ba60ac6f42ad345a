// SPDX-License-Identifier: Apache-2.0
// Building a ReportModel from a gua SQLite database through the audit math.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/cost.hpp"
#include "audit/grouping.hpp"
#include "audit/health.hpp"
#include "audit/window.hpp"
#include "core/timezone.hpp"
#include "report/model.hpp"
#include "report/timeline.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// What to report on.
struct BuildOptions {
    TimeUs from = 0;
    TimeUs to = 0;
    std::string window_label;
    audit::Thresholds thresholds;
    std::optional<std::string> gpu;              ///< index ("0") or uuid prefix ("GPU-0a7c")
    std::optional<std::string> user;             ///< only card-ticks where this user had a process
    std::optional<DurationUs> interval_override; ///< --interval, as gpu-usage-audit has it
    std::size_t top_identities = 10;
    audit::Pricing pricing;      ///< §7 prices (and the spot discount used in §8)
    audit::EnergyPricing energy; ///< §9 electricity price and carbon intensity
    audit::HealthRules health;   ///< §9 busy-but-light threshold
    audit::Grouping grouping;    ///< §4 and §7 identities: by user or by team
    bool group_by_job = false;   ///< --group-by job: §4 lists jobs (report/build_jobs.hpp)
    /// --job ID: the report of one job's cards over its window, each card-tick reduced to the
    /// job's share of it (audit::JobSlicer), so every section agrees with `gua job ID`.
    std::optional<std::string> job;
    /// The zone the report is asked for (--tz, else [report] time_zone); the builders take the
    /// loaded TimeZone, fleet reports compare it with the daemons' zone.
    std::string time_zone = "UTC";
};

/// Reads the window from `db` and computes every section. `allocations` is the allocation table
/// the card-ticks' AllocationShare indexes; empty: the database's (Reader::allocations of the
/// window). Throws Fatal for
/// a filter that matches nothing known to the database.
/// A model holding only what every report states first: version, window, zone and thresholds
/// (the database report and the fleet report start from it).
ReportModel model_for_window(const BuildOptions& options, const TimeZone& tz);

ReportModel build_report(store::Database& db, const BuildOptions& options, const TimeZone& tz,
                         const std::vector<audit::AllocationRow>& allocations = {});

/// The tables a window's totals refer to: cards and identities by their store ids, allocations
/// by their index.
struct WindowTables {
    const std::vector<store::GpuRow>& gpus;
    const std::vector<store::IdentityRow>& identities;
    const std::vector<audit::AllocationRow>& allocations;
};

/// Computes the sections that follow from the accumulated window alone (§1–§9 but the policy
/// section and the notes the reading adds) into `m`; build_report's second half, open to
/// callers that accumulate card-ticks themselves.
void build_sections(const audit::WindowAccumulator& acc, const WindowTables& tables,
                    const BuildOptions& options, const TimelineGrid& timeline, ReportModel& m);

} // namespace gua::report

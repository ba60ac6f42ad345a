// SPDX-License-Identifier: Apache-2.0
// Who gets a digest and with what figures: the report of the window and of the previous window
// of equal length, by user and by team, read once from the database.
#pragma once

#include "audit/grouping.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/digest.hpp"
#include "store/database.hpp"

#include <optional>
#include <vector>

namespace gua::report {

/// What to digest. `options` is the report's (window, thresholds, prices, [teams]); its grouping
/// is set per digest kind.
struct DigestPlan {
    BuildOptions options;
    /// A user whose idle-held GPU-hours in the window are below this gets no digest.
    double min_idle_held_hours = 1.0;
    /// How users form teams: GroupBy::team ([teams]) or GroupBy::pod_namespace; nullopt: no
    /// team digests.
    std::optional<audit::GroupBy> teams = audit::GroupBy::team;
    bool users = true;
    bool team_digests = true;
    bool admin = true;
};

/// The digests of `plan`: the admin's first, then one per team (not "(no team)" or "(no
/// namespace)"), then one per user at or above the threshold, most GPU-hours first. Throws Fatal
/// for a window the report refuses.
std::vector<DigestFigures> build_digests(store::Database& db, const DigestPlan& plan,
                                         const TimeZone& tz);

} // namespace gua::report

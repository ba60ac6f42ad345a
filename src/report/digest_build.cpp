// SPDX-License-Identifier: Apache-2.0
// Building the digests from report models: one report per window and grouping, and one report
// filtered to each user for the user's idle-held stretches.
#include "report/digest_build.hpp"

#include "core/fatal.hpp"

#include <limits>

namespace gua::report {

namespace {

struct Pair {
    ReportModel now;
    ReportModel previous;
};

/// The reports of the window and the previous window of equal length, grouped by `by`.
Pair reports(store::Database& db, const BuildOptions& base, audit::GroupBy by, const TimeZone& tz) {
    BuildOptions o = base;
    o.grouping.by = by;
    o.top_identities = std::numeric_limits<std::size_t>::max();
    BuildOptions before = o;
    before.to = o.from;
    before.from = o.from - (o.to - o.from);
    before.window_label.clear();
    return Pair{build_report(db, o, tz), build_report(db, before, tz)};
}

/// The window filtered to `user`; nullopt when the report refuses the filter (no raw ticks).
std::optional<ReportModel> user_report(store::Database& db, const BuildOptions& base,
                                       const std::string& user, const TimeZone& tz) {
    BuildOptions o = base;
    o.user = user;
    try {
        return build_report(db, o, tz);
    } catch (const Fatal&) {
        return std::nullopt;
    }
}

void add_teams(store::Database& db, const DigestPlan& plan, const TimeZone& tz,
               std::vector<DigestFigures>& out) {
    const Pair p = reports(db, plan.options, *plan.teams, tz);
    for (const IdentityRow& row : p.now.identities) {
        if (row.name == audit::k_no_team || row.name == audit::k_no_namespace) {
            continue;
        }
        if (auto f = identity_digest(p.now, p.previous, "team", row.name, nullptr)) {
            out.push_back(std::move(*f));
        }
    }
}

} // namespace

std::vector<DigestFigures> build_digests(store::Database& db, const DigestPlan& plan,
                                         const TimeZone& tz) {
    std::vector<DigestFigures> out;
    const Pair users = reports(db, plan.options, audit::GroupBy::user, tz);
    if (plan.admin) {
        out.push_back(admin_digest(users.now, users.previous));
    }
    if (plan.team_digests && plan.teams) {
        add_teams(db, plan, tz, out);
    }
    if (!plan.users) {
        return out;
    }
    for (const IdentityRow& row : users.now.identities) {
        if (row.idle_held_hours < plan.min_idle_held_hours) {
            continue;
        }
        const std::optional<ReportModel> own = user_report(db, plan.options, row.name, tz);
        if (auto f = identity_digest(users.now, users.previous, "user", row.name,
                                     own ? &*own : nullptr)) {
            out.push_back(std::move(*f));
        }
    }
    return out;
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// Identity grouping for the report: by user, by team through a user → team map, or by
// Kubernetes namespace.
#pragma once

#include "telemetry/identity.hpp"

#include <map>
#include <string>

namespace gua::audit {

/// How §4 and the per-identity cost group identities.
enum class GroupBy : unsigned char { user = 0, team = 1, pod_namespace = 2 };

/// Users without a team are grouped here when grouping by team.
inline constexpr const char* k_no_team = "(no team)";
/// Identities outside a named Kubernetes pod are grouped here when grouping by namespace.
inline constexpr const char* k_no_namespace = "(no namespace)";

/// The grouping configuration ([report] group_by and [teams] in gua.toml).
struct Grouping {
    GroupBy by = GroupBy::user;
    std::map<std::string, std::string> team_of; ///< user name → team name

    /// The group of `user`: the user itself, or its team (k_no_team when it has none).
    std::string group_of(const std::string& user) const {
        if (by == GroupBy::user) {
            return user;
        }
        const auto it = team_of.find(user);
        return it == team_of.end() ? std::string(k_no_team) : it->second;
    }

    /// The group of `identity`: its user's group (as above), or its pod's namespace
    /// (k_no_namespace when it has none) when grouping by namespace.
    std::string group_of(const telemetry::Identity& identity) const {
        if (by == GroupBy::pod_namespace) {
            return identity.pod_namespace.empty() ? std::string(k_no_namespace)
                                                  : identity.pod_namespace;
        }
        return group_of(identity.user);
    }
};

} // namespace gua::audit

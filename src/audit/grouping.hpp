// Identity grouping for the report: by user, or by team through a user → team map.
#pragma once

#include <map>
#include <string>

namespace gua::audit {

/// How §4 and the per-identity cost group identities.
enum class GroupBy : unsigned char { user = 0, team = 1 };

/// Users without a team are grouped here when grouping by team.
inline constexpr const char* k_no_team = "(no team)";

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
};

} // namespace gua::audit

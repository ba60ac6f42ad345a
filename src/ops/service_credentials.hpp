// SPDX-License-Identifier: Apache-2.0
// The credentials gua.service gives its daemon, worked out from the unit's settings and the
// account files of the target system (so `gua doctor` can tell before the daemon runs).
#pragma once

#include "core/result.hpp"
#include "ops/paths.hpp"
#include "ops/unit_file.hpp"
#include "policy/privileges.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::ops {

/// The capability bits of systemd capability lists (`CapabilityBoundingSet=`,
/// `AmbientCapabilities=`): each value is space-separated CAP_* names, a leading `~` means "all
/// but these"; plain lists are OR-ed, `~` lists AND-ed, as systemd merges them. Names gua does
/// not need are ignored.
std::uint64_t capability_mask(const std::vector<std::string>& values);

/// The gid of group `name` in <root>/etc/group; nullopt when it is not there.
std::optional<std::uint32_t> group_gid(const Paths& paths, const std::string& name);

/// What the daemon of `unit` runs with: User= (root when unset) and its primary group from
/// <root>/etc/passwd, Group=, SupplementaryGroups= and the user's memberships in <root>/etc/group,
/// and its effective capabilities (root: the bounding set; another user: AmbientCapabilities= ∩
/// CapabilityBoundingSet=). Errors when User= or a group is not in the account files.
Result<policy::Credentials> unit_credentials(const UnitSettings& unit, const Paths& paths);

} // namespace gua::ops

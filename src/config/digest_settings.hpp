// SPDX-License-Identifier: Apache-2.0
// What gua.toml's [digest] section sets: who gets `gua digest`'s digests, at what threshold,
// grouped how (no TOML here: config.hpp includes it everywhere).
#pragma once

#include <map>
#include <string>

namespace gua::config {

/// [digest] (docs/notify.md).
struct DigestSettings {
    /// [digest.recipients]: user or team name → address, for delivery.
    std::map<std::string, std::string> recipients;
    std::string admin;                ///< the admin digest's address; empty: none
    double min_idle_held_hours = 1.0; ///< users below it get no digest
    std::string group_by = "team";    ///< team digests by "team" ([teams]), "namespace", "none"
};

} // namespace gua::config

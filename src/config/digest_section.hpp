// SPDX-License-Identifier: Apache-2.0
// gua.toml's [digest] section: who gets `gua digest`'s digests, at what threshold, grouped how.
#pragma once

#include "core/result.hpp"

#include <toml++/toml.h>

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

/// Reads [digest] into `out`. Unknown keys, a negative threshold, an unknown group_by and an
/// address with a line break or control character are errors naming file, line and key.
Result<void> parse_digest(const std::string& path, const toml::table& table, DigestSettings& out);

} // namespace gua::config

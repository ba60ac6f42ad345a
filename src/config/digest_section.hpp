// SPDX-License-Identifier: Apache-2.0
// Parser of gua.toml's [digest] section (config/digest_settings.hpp).
#pragma once

#include "config/digest_settings.hpp"
#include "core/result.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads [digest] into `out`. Unknown keys, a negative threshold, an unknown group_by and an
/// address with a line break or control character are errors naming file, line and key.
Result<void> parse_digest(const std::string& path, const toml::table& table, DigestSettings& out);

} // namespace gua::config

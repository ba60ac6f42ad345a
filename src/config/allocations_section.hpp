// SPDX-License-Identifier: Apache-2.0
// Parser of gua.toml's [allocations] section: mapping directories and the kubelet socket.
#pragma once

#include "alloc/settings.hpp"
#include "core/result.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads [allocations] mapping_dir (a list of absolute directory paths; a single string is
/// accepted too) and kubelet_socket (an absolute path) into `out`. Errors name file, line and key.
Result<void> parse_allocations(const std::string& path, const toml::table& table,
                               alloc::Settings& out);

} // namespace gua::config

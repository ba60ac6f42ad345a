// SPDX-License-Identifier: Apache-2.0
// Parsing of gua.toml's [policy] table and its [[policy.rule]] array (docs/policy.md).
#pragma once

#include "core/result.hpp"
#include "policy/rule.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads the [policy] table `table` of the file `path` into `out`. Unknown keys, wrong types,
/// duplicate or missing rule names and bad durations or sizes are errors naming file, line and
/// key.
Result<void> parse_policy(const std::string& path, const toml::table& table,
                          policy::PolicyConfig& out);

} // namespace gua::config

// Parsing of gua.toml's [policy] table and its [[policy.rule]] array (docs/policy.md).
#pragma once

#include "core/result.hpp"
#include "policy/rule.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Parses the [policy] table `table` of the file `path`. Unknown keys, wrong types, duplicate or
/// missing rule names and bad durations or sizes are errors naming file, line and key.
Result<policy::PolicyConfig> parse_policy_section(const toml::table& table,
                                                  const std::string& path);

} // namespace gua::config

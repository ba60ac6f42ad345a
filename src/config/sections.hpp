// Parsers of the gua.toml sections that feed the report's money and grouping: [pricing],
// [report] and [teams].
#pragma once

#include "audit/cost.hpp"
#include "audit/grouping.hpp"
#include "core/result.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads [pricing] (currency, default, spot_discount, [pricing.models]) into `out`; the models
/// keep their order in the file. Errors name file, line and key.
Result<void> parse_pricing(const std::string& path, const toml::table& table, audit::Pricing& out);

/// Reads [report] (group_by) into `out`.
Result<void> parse_report(const std::string& path, const toml::table& table, audit::Grouping& out);

/// Reads [teams] (user = "team") into `out`.
Result<void> parse_teams(const std::string& path, const toml::table& table, audit::Grouping& out);

} // namespace gua::config

// SPDX-License-Identifier: Apache-2.0
// Parsers of the gua.toml sections that feed the report's money and grouping ([pricing], [energy],
// [report], [teams]) and the store's [retention].
#pragma once

#include "audit/cost.hpp"
#include "audit/grouping.hpp"
#include "audit/health.hpp"
#include "core/result.hpp"
#include "store/retention.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads [pricing] (currency, default, spot_discount, [pricing.models]) into `out`; the models
/// keep their order in the file. Errors name file, line and key.
Result<void> parse_pricing(const std::string& path, const toml::table& table, audit::Pricing& out);

/// Reads [report] (group_by, time_zone) into `grouping` and `time_zone` (a zone name that
/// TimeZone::load accepts).
Result<void> parse_report(const std::string& path, const toml::table& table,
                          audit::Grouping& grouping, std::string& time_zone);

/// Reads [teams] (user = "team") into `out`.
Result<void> parse_teams(const std::string& path, const toml::table& table, audit::Grouping& out);

/// Reads [energy] (price_per_kwh in the [pricing] currency, grams_co2_per_kwh) into `out`.
Result<void> parse_energy(const std::string& path, const toml::table& table,
                          audit::EnergyPricing& out);

/// Reads [health] (light_power_pct: a multiple of 5 from 5 to 95) into `out`.
Result<void> parse_health(const std::string& path, const toml::table& table,
                          audit::HealthRules& out);

/// Reads [retention] (raw, rollup: a duration of at least 1h or "forever") into `out`.
Result<void> parse_retention(const std::string& path, const toml::table& table,
                             store::RetentionPolicy& out);

} // namespace gua::config

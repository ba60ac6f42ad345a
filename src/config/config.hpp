// SPDX-License-Identifier: Apache-2.0
// gua.toml: thresholds and daemon settings shared by the daemon and the report, prices and
// identity grouping for the report.
#pragma once

#include "alloc/settings.hpp"
#include "audit/card_tick.hpp"
#include "audit/cost.hpp"
#include "audit/grouping.hpp"
#include "audit/health.hpp"
#include "config/delivery_settings.hpp"
#include "config/digest_settings.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "policy/rule.hpp"
#include "store/retention.hpp"

#include <optional>
#include <string>

namespace gua::config {

/// Settings from gua.toml. Every field has a default, so an empty file is valid.
struct Config {
    std::string path; ///< the file this came from; empty for built-in defaults
    audit::Thresholds thresholds;
    std::optional<DurationUs> interval_us; ///< [daemon] interval
    std::optional<std::string> db;         ///< [daemon] db
    /// [daemon] listen: the address of /metrics and the report pages (`--listen`); "" is off.
    std::optional<std::string> listen;
    /// [daemon] web_config: the exporter-toolkit YAML securing that address (`--web-config`).
    std::optional<std::string> web_config;
    /// [daemon] kernel_log: where the daemon reads the driver's Xid lines (default /dev/kmsg;
    /// "" is off; docs/faults.md).
    std::optional<std::string> kernel_log;
    audit::Pricing pricing;           ///< [pricing]; built-in example prices without it
    audit::EnergyPricing energy;      ///< [energy]: electricity price and carbon intensity
    audit::HealthRules health;        ///< [health]: what "busy but light" means
    audit::Grouping grouping;         ///< [report] group_by and [teams]
    policy::PolicyConfig policy;      ///< [policy] and [[policy.rule]] (docs/policy.md)
    store::RetentionPolicy retention; ///< [retention] raw, rollup
    /// [report] time_zone: the reports' default zone (heatmap, office hours) and the zone in
    /// which the daemon's exported waste pools split office hours from off hours.
    std::string time_zone = "UTC";
    alloc::Settings allocations; ///< [allocations]: mapping_dir, kubelet_socket
    DigestSettings digest;       ///< [digest]: `gua digest` recipients and threshold
    DeliverySettings delivery;   ///< [mail], [webhook.NAME], [delivery] (docs/notify.md)
};

/// Parses the TOML text `text` (named `path` in errors). Errors say file, line and key, e.g.
/// "gua.toml:3: thresholds.active_util_pct: expected a number between 0 and 100".
Result<Config> parse_config(const std::string& text, const std::string& path);

/// Reads and parses `path`. A missing file is an error naming it.
Result<Config> load_config(const std::string& path);

/// The config file to use when none is given: $XDG_CONFIG_HOME/gua/gua.toml (or
/// ~/.config/gua/gua.toml) for a user if it exists, else /etc/gua/gua.toml if it exists.
std::optional<std::string> find_config_file();

/// Loads `explicit_path` if non-empty, else the file find_config_file() finds, else defaults.
Result<Config> load_effective_config(const std::string& explicit_path);

} // namespace gua::config

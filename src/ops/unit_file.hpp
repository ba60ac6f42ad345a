// SPDX-License-Identifier: Apache-2.0
// Reading the settings of an installed gua.service (the unit and its drop-ins) that decide
// whether the daemon can work: device and /proc visibility, and the watchdog.
#pragma once

#include "core/time.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gua::ops {

/// The [Service] settings of a unit after its drop-ins; for repeated keys every value is kept.
struct UnitSettings {
    std::map<std::string, std::vector<std::string>> service;
    /// Every key assigned at least once, even if only emptied: `CapabilityBoundingSet=` alone
    /// means an empty set, while no assignment at all leaves the full set.
    std::set<std::string> assigned;
    std::optional<DurationUs> watchdog_us; ///< WatchdogSec=, when set

    /// The last value assigned to `key`, "" when none (or when it was last emptied).
    std::string last(const std::string& key) const;
};

/// Reads `unit_path`, then the drop-ins `<unit_path>.d/*.conf` and `admin_drop_ins/*.conf` (the
/// <root>/etc/systemd/system/gua.service.d of `systemctl edit`), each in name order. Missing
/// files give empty settings.
UnitSettings read_unit_settings(const std::string& unit_path, const std::string& admin_drop_ins);

/// Parses a systemd time span such as "120", "120s", "2min", "1min 30s", "500ms"; nullopt when
/// it is not one.
std::optional<DurationUs> parse_time_span(const std::string& text);

/// The settings that would stop the daemon from opening /dev/nvidia* or seeing other users'
/// processes, each as a sentence naming the setting.
std::vector<std::string> blocking_settings(const UnitSettings& unit);

} // namespace gua::ops

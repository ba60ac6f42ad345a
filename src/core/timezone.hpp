// SPDX-License-Identifier: Apache-2.0
// Time zones for the heatmap and office hours: UTC, the host's local zone, or an IANA name from
// the tz database.
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <memory>
#include <string>
#include <utility>

namespace gua {

struct ZoneRules;

/// A resolved time zone. A non-UTC zone's rules are read once, when it is loaded, from the tz
/// database (core/tz_rules.hpp); evaluating it is pure arithmetic, so zones may be used from any
/// thread and several at once, and the process environment (TZ) is never changed.
class TimeZone {
  public:
    /// "UTC" (default), "local" (the user's $TZ when gua started, as for date(1), else the host's
    /// /etc/localtime), or an IANA name such as "Europe/Berlin". Unknown names are an Error
    /// naming the zone.
    static Result<TimeZone> load(const std::string& name);
    /// The zone's display name.
    const std::string& name() const { return m_name; }
    /// (weekday 0 = Sunday, hour 0–23) of `t` in this zone.
    std::pair<int, int> weekday_hour(TimeUs t) const;

  private:
    std::string m_name = "UTC";
    std::shared_ptr<const ZoneRules> m_rules; ///< null: UTC
};

} // namespace gua

// SPDX-License-Identifier: Apache-2.0
// Time zones for the heatmap and office hours: UTC, the host's local zone, or an IANA name from
// the tz database.
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <string>
#include <utility>

namespace gua {

/// A resolved time zone. Non-UTC zones are evaluated with the C library (TZ + localtime_r); the
/// process's TZ is switched under a lock to the zone asked about, so zones may be used from any
/// thread and several at once (each switch re-reads the zone file: keep one zone per thread hot).
class TimeZone {
  public:
    /// "UTC" (default), "local" (the host's /etc/localtime), or an IANA name such as
    /// "Europe/Berlin". Unknown names are an Error naming the zone.
    static Result<TimeZone> load(const std::string& name);
    /// The zone's display name.
    const std::string& name() const { return m_name; }
    /// (weekday 0 = Sunday, hour 0–23) of `t` in this zone.
    std::pair<int, int> weekday_hour(TimeUs t) const;

  private:
    std::string m_name = "UTC";
    std::string m_tz; ///< the TZ value of a non-UTC zone; empty: the host's local zone
    bool m_utc = true;
};

} // namespace gua

// Time zones for the heatmap: UTC, the host's local zone, or an IANA name from the tz database.
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <string>
#include <utility>

namespace gua {

/// A resolved time zone. Non-UTC zones are evaluated with the C library (TZ + localtime_r), so
/// a process uses at most one non-UTC zone at a time (gua's CLI commands are single-threaded).
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
    bool m_utc = true;
};

} // namespace gua

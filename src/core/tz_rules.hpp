// SPDX-License-Identifier: Apache-2.0
// A time zone's rules read once into memory: a tz database file (TZif, RFC 8536) and its POSIX TZ
// footer, or a POSIX TZ string alone. Pure lookups afterwards: no environment, no global state.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua {

/// A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"): standard offset, and optionally daylight
/// saving time between two yearly dates.
struct PosixZone {
    /// A yearly date: Jn (Julian day 1–365, no leap day), n (0–365 counting it) or Mm.w.d.
    struct Date {
        enum class Kind { julian_no_leap, julian, month_week_day } kind = Kind::month_week_day;
        int day = 0;                ///< Jn / n: the day; Mm.w.d: d (0 = Sunday)
        int month = 0;              ///< Mm.w.d: m (1–12)
        int week = 0;               ///< Mm.w.d: w (1–5, 5 = the last)
        std::int64_t time_s = 7200; ///< local time of day of the change (may be < 0 or > 24 h)
    };
    std::string std_name;
    std::int64_t std_utoff_s = 0; ///< seconds east of UTC
    std::optional<std::string> dst_name;
    std::int64_t dst_utoff_s = 0;
    Date start, end;

    /// Seconds east of UTC at `t` (seconds since the epoch, UTC).
    std::int64_t utoff_at(std::int64_t t) const;
};

/// Parses a POSIX TZ string. Errors name what is wrong.
Result<PosixZone> parse_posix_zone(std::string_view text);

/// A zone's UTC offsets over time.
struct ZoneRules {
    std::vector<std::int64_t> transitions; ///< UTC seconds, ascending
    std::vector<std::uint8_t> type_of;     ///< local time type after each transition
    std::vector<std::int64_t> utoffs;      ///< seconds east of UTC of each local time type
    std::vector<bool> is_dst;              ///< of each local time type
    std::vector<std::string> names;        ///< abbreviation of each local time type
    std::optional<PosixZone> footer;       ///< after the last transition

    /// Seconds east of UTC at `t` (seconds since the epoch, UTC).
    std::int64_t utoff_at(std::int64_t t) const;
    /// The standard-time abbreviation ("CET", "JST", "UTC"), as tzname[0] shows it.
    std::string std_name() const;
};

/// Parses the bytes of a TZif file (versions 1 to 4). Errors say what is malformed.
Result<ZoneRules> parse_tzif(std::string_view bytes);

/// Reads and parses the TZif file at `path`.
Result<ZoneRules> load_tzif(const std::string& path);

/// Rules made of a POSIX TZ string alone.
ZoneRules rules_of(PosixZone zone);

} // namespace gua

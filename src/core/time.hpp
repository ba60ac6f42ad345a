// SPDX-License-Identifier: Apache-2.0
// Wall-clock time as UTC microseconds since the Unix epoch, and its ISO 8601 text form.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gua {

/// UTC microseconds since 1970-01-01T00:00:00Z.
using TimeUs = std::int64_t;
/// A span of time in microseconds.
using DurationUs = std::int64_t;

inline constexpr DurationUs k_us_per_ms = 1000;
inline constexpr DurationUs k_us_per_second = 1000 * k_us_per_ms;
inline constexpr DurationUs k_us_per_minute = 60 * k_us_per_second;
inline constexpr DurationUs k_us_per_hour = 60 * k_us_per_minute;
inline constexpr DurationUs k_us_per_day = 24 * k_us_per_hour;

/// Converts microseconds to hours as a double (for GPU-hours).
inline constexpr double to_hours(DurationUs us) {
    return static_cast<double>(us) / static_cast<double>(k_us_per_hour);
}

/// GiB-hours of a sum of MiB × milliseconds (how memory held over time is summed exactly).
inline constexpr double gib_hours_of_mib_ms(std::int64_t mib_ms) {
    return static_cast<double>(mib_ms) / 1024.0 / static_cast<double>(k_us_per_hour / k_us_per_ms);
}

/// Formats as "2026-05-11T08:00:00Z" (seconds precision, UTC).
std::string format_iso8601(TimeUs t);

/// Parses "2026-05-11", "2026-05-11T08:00", "2026-05-11T08:00:00[.ffffff]" with an optional
/// "Z" or "+hh:mm"/"-hh:mm" offset (no offset means UTC). Errors name the bad text.
Result<TimeUs> parse_iso8601(std::string_view text);

/// The current wall-clock time (CLOCK_REALTIME).
TimeUs wall_now();

} // namespace gua

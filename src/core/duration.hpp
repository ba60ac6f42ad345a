// SPDX-License-Identifier: Apache-2.0
// Human durations on the command line: 200ms, 30s, 5m, 1.5h, 7d, 2w.
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <string>
#include <string_view>

namespace gua {

/// Parses `<number>[.<fraction>]<unit>` with unit ms, s, m, h, d or w into microseconds.
/// Rejects a missing unit, spaces, signs, zero and anything over 100 years.
Result<DurationUs> parse_duration(std::string_view text);

/// Formats compactly for humans: "500ms", "30s", "5m", "1h30m", "2d4h", "3w".
std::string format_duration(DurationUs us);

} // namespace gua

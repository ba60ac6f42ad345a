// SPDX-License-Identifier: Apache-2.0
// IEC size formatting.
#include "core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace gua {

std::string format_bytes(std::uint64_t bytes) {
    if (bytes < 1024) {
        return fmt::format("{} B", bytes);
    }
    static constexpr std::array<const char*, 4> k_units{"KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes) / 1024.0;
    std::size_t unit = 0;
    // Step up while the one-decimal text would read 1024.0 or more.
    while (unit + 1 < k_units.size() && std::round(value * 10.0) >= 1024.0 * 10.0) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, k_units[unit]);
}

std::string format_gib(double mib) {
    return fmt::format("{:.1f} GiB", mib / 1024.0);
}

std::string format_hours(double hours) {
    if (hours >= 1000) {
        return fmt::format("{:.0f}", hours);
    }
    if (hours >= 0.1 || hours == 0) {
        return fmt::format("{:.2f}", hours);
    }
    return fmt::format("{:.4f}", hours);
}

} // namespace gua

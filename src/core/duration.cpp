// SPDX-License-Identifier: Apache-2.0
// Parsing and formatting of human durations.
#include "core/duration.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

namespace gua {

namespace {

struct Unit {
    std::string_view suffix;
    DurationUs us;
};

constexpr std::array<Unit, 6> k_units{{{"ms", k_us_per_ms},
                                       {"s", k_us_per_second},
                                       {"m", k_us_per_minute},
                                       {"h", k_us_per_hour},
                                       {"d", k_us_per_day},
                                       {"w", 7 * k_us_per_day}}};

constexpr DurationUs k_max_duration = 100LL * 366 * k_us_per_day;

} // namespace

Result<DurationUs> parse_duration(std::string_view text) {
    const Error bad{
        fmt::format("invalid duration '{}' (expected e.g. 200ms, 30s, 5m, 1.5h, 7d, 2w)", text)};
    std::size_t i = 0;
    std::int64_t whole = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        whole = whole * 10 + (text[i] - '0');
        if (whole > k_max_duration) {
            return bad;
        }
        ++i;
    }
    if (i == 0) {
        return bad;
    }
    std::int64_t frac_num = 0;
    std::int64_t frac_den = 1;
    if (i < text.size() && text[i] == '.') {
        ++i;
        const std::size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (frac_den < 1000000000) {
                frac_num = frac_num * 10 + (text[i] - '0');
                frac_den *= 10;
            }
            ++i;
        }
        if (i == start) {
            return bad;
        }
    }
    const std::string_view suffix = text.substr(i);
    for (const Unit& unit : k_units) {
        if (suffix == unit.suffix) {
            if (whole > k_max_duration / unit.us) {
                return bad;
            }
            // frac_num < frac_den ≤ 1e9: both products stay far below 2^63.
            const DurationUs us = whole * unit.us + frac_num * (unit.us / frac_den) +
                                  frac_num * (unit.us % frac_den) / frac_den;
            if (us <= 0 || us > k_max_duration) {
                return bad;
            }
            return us;
        }
    }
    return bad;
}

std::string format_duration(DurationUs us) {
    if (us < k_us_per_second) {
        return fmt::format("{}ms", us / k_us_per_ms);
    }
    if (us < k_us_per_minute) {
        if (us % k_us_per_second == 0) {
            return fmt::format("{}s", us / k_us_per_second);
        }
        return fmt::format("{:.1f}s", static_cast<double>(us) / k_us_per_second);
    }
    const std::int64_t total_s = us / k_us_per_second;
    const std::int64_t w = total_s / (7 * 86400);
    const std::int64_t d = total_s / 86400;
    const std::int64_t h = (total_s % 86400) / 3600;
    const std::int64_t m = (total_s % 3600) / 60;
    const std::int64_t s = total_s % 60;
    if (d >= 7 && d % 7 == 0 && h == 0 && m == 0) {
        return fmt::format("{}w", w);
    }
    if (d > 0) {
        return h > 0 ? fmt::format("{}d{}h", d, h) : fmt::format("{}d", d);
    }
    if (h > 0) {
        return m > 0 ? fmt::format("{}h{:02}m", h, m) : fmt::format("{}h", h);
    }
    return s > 0 ? fmt::format("{}m{:02}s", m, s) : fmt::format("{}m", m);
}

} // namespace gua

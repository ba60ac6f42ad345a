// SPDX-License-Identifier: Apache-2.0
// Pricing and cost arithmetic in integer micro-units and cents.
#include "audit/cost.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gua::audit {

namespace {

bool contains_icase(std::string_view haystack, std::string_view needle) {
    if (needle.empty()) {
        return true;
    }
    const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                                [](char a, char b) {
                                    return std::tolower(static_cast<unsigned char>(a)) ==
                                           std::tolower(static_cast<unsigned char>(b));
                                });
    return it != haystack.end();
}

} // namespace

std::int64_t price_micros(const Pricing& pricing, std::string_view model) {
    if (pricing.override_micros_per_gpu_hour) {
        return *pricing.override_micros_per_gpu_hour;
    }
    for (const ModelPrice& p : pricing.models) {
        if (contains_icase(model, p.match)) {
            return p.micros_per_gpu_hour;
        }
    }
    return pricing.default_micros_per_gpu_hour;
}

std::optional<std::int64_t> to_micros(double units_per_gpu_hour) {
    if (!std::isfinite(units_per_gpu_hour) || units_per_gpu_hour < 0) {
        return std::nullopt;
    }
    const double micros = std::round(units_per_gpu_hour * static_cast<double>(k_micros_per_unit));
    if (micros > static_cast<double>(k_max_micros_per_gpu_hour)) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(micros);
}

std::int64_t cost_cents(DurationUs time_us, std::int64_t micros_per_gpu_hour) {
    if (time_us <= 0 || micros_per_gpu_hour <= 0) {
        return 0;
    }
    // cents = time × price / (µs per hour × micros per cent). Split time into whole hours and a
    // remainder so every product stays below 2^63 for prices up to k_max_micros_per_gpu_hour.
    const std::int64_t price = std::min(micros_per_gpu_hour, k_max_micros_per_gpu_hour);
    const std::int64_t whole_hours = time_us / k_us_per_hour;
    const std::int64_t rest_us = time_us % k_us_per_hour;
    const std::int64_t hours_micros = whole_hours * price;
    const std::int64_t cents = hours_micros / k_micros_per_cent;
    const std::int64_t divisor = k_us_per_hour * k_micros_per_cent;
    const std::int64_t remainder =
        (hours_micros % k_micros_per_cent) * k_us_per_hour + rest_us * price;
    return cents + remainder / divisor + (2 * (remainder % divisor) >= divisor ? 1 : 0);
}

std::int64_t share_cost_cents(double time_us, std::int64_t micros_per_gpu_hour) {
    return cost_cents(static_cast<DurationUs>(std::llround(std::max(time_us, 0.0))),
                      micros_per_gpu_hour);
}

StateCost& StateCost::operator+=(const StateCost& o) {
    active_cents += o.active_cents;
    idle_held_cents += o.idle_held_cents;
    truly_idle_cents += o.truly_idle_cents;
    allocated_unused_cents += o.allocated_unused_cents;
    return *this;
}

StateCost cost_of(const StateTimes& times, std::int64_t micros_per_gpu_hour) {
    return StateCost{cost_cents(times.active, micros_per_gpu_hour),
                     cost_cents(times.idle_held, micros_per_gpu_hour),
                     cost_cents(times.truly_idle, micros_per_gpu_hour),
                     cost_cents(times.allocated_unused, micros_per_gpu_hour)};
}

RunRate run_rate(double micros_per_hour) {
    if (!std::isfinite(micros_per_hour)) {
        return RunRate{};
    }
    return RunRate{std::llround(micros_per_hour / static_cast<double>(k_micros_per_cent))};
}

double hourly_micros(double part_us, DurationUs measured_us, std::int64_t micros_per_gpu_hour) {
    if (measured_us <= 0) {
        return 0;
    }
    return static_cast<double>(micros_per_gpu_hour) * std::max(part_us, 0.0) /
           static_cast<double>(measured_us);
}

} // namespace gua::audit

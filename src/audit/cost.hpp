// SPDX-License-Identifier: Apache-2.0
// Money: GPU-hour prices by model name, and card time priced in integer cents (one rounding
// step), with run-rates whose monthly and yearly figures are exact multiples of the hourly one.
#pragma once

#include "audit/classify.hpp"
#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::audit {

/// Prices are kept in micro-units of the currency (1e-6 $) per GPU-hour: sub-cent precise.
inline constexpr std::int64_t k_micros_per_unit = 1'000'000;
inline constexpr std::int64_t k_micros_per_cent = 10'000;
/// The highest accepted price, 1000 per GPU-hour: far above any GPU on sale, and it keeps the
/// exact integer arithmetic of cost_cents() inside 64 bits.
inline constexpr std::int64_t k_max_micros_per_gpu_hour = 1000 * k_micros_per_unit;
/// A month is 30 days and a year 365 days of run-rate (stated in the report).
inline constexpr std::int64_t k_hours_per_month = 24 * 30;
inline constexpr std::int64_t k_hours_per_year = 24 * 365;

/// One row of the price table: models whose name contains `match` (case-insensitive) cost
/// `micros_per_gpu_hour`.
struct ModelPrice {
    std::string match;
    std::int64_t micros_per_gpu_hour = 0;
};

/// The price table. Built-in defaults are example on-demand prices (configured == false).
struct Pricing {
    std::string currency = "USD"; ///< ISO 4217 code
    std::vector<ModelPrice> models{{"H100", 4 * k_micros_per_unit},
                                   {"A100", 2 * k_micros_per_unit}};
    std::int64_t default_micros_per_gpu_hour = k_micros_per_unit; ///< models matching no row
    double spot_discount = 0.6; ///< fraction off on-demand for spot/preemptible capacity, [0, 1)
    std::optional<std::int64_t> override_micros_per_gpu_hour; ///< --price: every model
    bool configured = false; ///< true when a [pricing] table was read from gua.toml
};

/// The price of a GPU-hour of `model`: the override if set, else the first row (in table
/// order) whose match is a case-insensitive substring of `model`, else the default.
std::int64_t price_micros(const Pricing& pricing, std::string_view model);

/// Converts a price in currency units (e.g. 3.50) to micro-units, rounding once; nullopt when
/// negative, not finite or above k_max_micros_per_gpu_hour.
std::optional<std::int64_t> to_micros(double units_per_gpu_hour);

/// The cost of `time_us` of one card at `micros_per_gpu_hour`, in cents, rounded half up once
/// (exact integer arithmetic). Negative time costs 0. The price must be within
/// [0, k_max_micros_per_gpu_hour].
std::int64_t cost_cents(DurationUs time_us, std::int64_t micros_per_gpu_hour);

/// The same for a fractional time (attribution shares), rounded to whole microseconds first.
std::int64_t share_cost_cents(double time_us, std::int64_t micros_per_gpu_hour);

/// The cost of card time by state, in cents; each state is priced (and rounded) on its own.
struct StateCost {
    std::int64_t active_cents = 0;
    std::int64_t idle_held_cents = 0;
    std::int64_t truly_idle_cents = 0;
    std::int64_t allocated_unused_cents = 0; ///< 0 without an allocation source

    std::int64_t waste_cents() const {
        return idle_held_cents + truly_idle_cents + allocated_unused_cents;
    }
    std::int64_t total_cents() const { return active_cents + waste_cents(); }
    StateCost& operator+=(const StateCost& o);
};

/// Prices the measured states of `times` (unmeasured time is not priced).
StateCost cost_of(const StateTimes& times, std::int64_t micros_per_gpu_hour);

/// A run-rate in whole cents per hour; monthly and yearly are exact multiples of it.
struct RunRate {
    std::int64_t hourly_cents = 0;

    std::int64_t monthly_cents() const { return hourly_cents * k_hours_per_month; }
    std::int64_t yearly_cents() const { return hourly_cents * k_hours_per_year; }
};

/// Rounds an exact rate in micro-units per hour once, half away from zero, to a RunRate.
RunRate run_rate(double micros_per_hour);

/// The rate at which one card accrues `part_us` of its `measured_us` at `micros_per_gpu_hour`,
/// in micro-units per hour (unrounded): price × part / measured, or 0 without measured time.
double hourly_micros(double part_us, DurationUs measured_us, std::int64_t micros_per_gpu_hour);

} // namespace gua::audit

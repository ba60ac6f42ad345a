// SPDX-License-Identifier: Apache-2.0
// Waste pools: disjoint slices of each card's measured time that a remedy can win back, and the
// per-card evidence (patterns, memory, time of day) the recommender needs. Summed per card-tick.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/pattern.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace gua::audit {

/// The pools. Together they form the savings baseline: time paid for that did no work (idle-held,
/// truly idle, stalls inside bursty ticks, unused SM capacity while active) plus the busy time of
/// steady compute-bound ticks, which faster math paths shorten. No microsecond is in two pools.
enum class Pool : std::uint8_t {
    held_office = 0,    ///< idle-held outside bursty ticks, office hours
    held_off_hours = 1, ///< idle-held outside bursty ticks, nights and weekends
    idle_office = 2,    ///< truly idle outside bursty ticks, office hours
    idle_off_hours = 3, ///< truly idle outside bursty ticks, nights and weekends
    stall = 4,          ///< unused time of bursty ticks (data-loader starvation)
    headroom_under = 5, ///< unused SM capacity of other ticks with mean utilization < 70 %
    headroom_busy = 6,  ///< unused SM capacity of other ticks with mean utilization ≥ 70 %
    compute_bound = 7,  ///< busy time of steady ticks with mean utilization ≥ 90 %
    /// Allocated-unused outside bursty ticks: an allocation owned the card, nobody used it (0
    /// without an allocation source).
    allocated_unused = 8,
};
inline constexpr std::size_t k_pool_count = 9;

/// Microseconds per pool (fractional: utilization splits a tick).
using PoolTimes = std::array<double, k_pool_count>;

/// Returns the pool's JSON name, e.g. "held_office".
const char* to_string(Pool pool);

/// Office hours in the report's time zone: Monday–Friday, 09:00 to 18:00.
inline constexpr int k_office_first_hour = 9;
inline constexpr int k_office_end_hour = 18;

/// True outside office hours; `weekday` 0 = Sunday, `hour` 0–23.
bool is_off_hours(int weekday, int hour);

/// Per-card evidence, summed over its measured card-ticks.
struct CardProfile {
    DurationUs office_us = 0;               ///< measured time in office hours
    DurationUs off_hours_us = 0;            ///< measured time outside office hours
    DurationUs steady_us = 0;               ///< active card-ticks with a steady pattern
    DurationUs bursty_us = 0;               ///< active card-ticks with a bursty pattern
    DurationUs steady_under_us = 0;         ///< steady card-ticks with mean utilization < 70 %
    DurationUs steady_compute_bound_us = 0; ///< steady card-ticks with mean utilization ≥ 90 %
    std::array<DurationUs, k_bucket_count> bursty_bucket_us{}; ///< bucket times of bursty ticks
    double bursty_util_us = 0;               ///< Σ mean utilization % × duration, bursty ticks
    double steady_under_util_us = 0;         ///< the same over steady ticks below 70 %
    double steady_compute_bound_util_us = 0; ///< the same over steady ticks at or above 90 %
    double active_held_mib_us = 0;           ///< Σ held MiB × duration over active ticks
    double steady_under_held_mib_us = 0;     ///< the same over steady ticks below 70 %
    double idle_held_mib_us = 0;             ///< Σ held MiB × idle-held time outside bursty ticks

    CardProfile& operator+=(const CardProfile& o);
};

/// Memory held on the card by its holders (unknown readings count as 0 here).
std::int64_t held_mib(const CardTick& tick, const Thresholds& thresholds);

/// Adds one card-tick, classified as `states` with pattern `pattern` and falling in office hours
/// unless `off_hours`, to `pools` and `profile`. Unmeasured ticks add nothing.
void add_to_pools(const CardTick& tick, const StateTimes& states, Pattern pattern,
                  std::int64_t held, bool off_hours, PoolTimes& pools, CardProfile& profile);

} // namespace gua::audit

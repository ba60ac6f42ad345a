// SPDX-License-Identifier: Apache-2.0
// Slicing a card-tick into waste pools (see pools.hpp for the definitions).
#include "audit/pools.hpp"

#include "audit/health.hpp"

#include <algorithm>

namespace gua::audit {

namespace {

constexpr double k_productive_floor_pct = k_bucket_floor_pct[2];
constexpr double k_compute_bound_floor_pct = k_bucket_floor_pct[3];

/// Mean utilization; without a stored mean, the bucket midpoints weighted by bucket time.
double mean_util_pct(const CardTick& tick) {
    if (tick.util_pct) {
        return std::clamp(*tick.util_pct, 0.0, 100.0);
    }
    constexpr std::array<double, k_bucket_count> k_mid{5.0, 40.0, 80.0, 95.0};
    double weighted = 0;
    double total = 0;
    for (std::size_t b = 0; b < k_bucket_count; ++b) {
        weighted += k_mid[b] * static_cast<double>(tick.bucket_us[b]);
        total += static_cast<double>(tick.bucket_us[b]);
    }
    return total > 0 ? weighted / total : 0.0;
}

/// A tick whose utilization reads high while the card barely works (one small kernel at a time):
/// SM active under 20 % where GPM measured it, else under 30 % of the power limit. Faster math
/// cannot shorten such time, so it is never compute-bound. A fixed rule, unlike [health]
/// light_power_pct, because rollups keep the pools they were built with.
bool light_for_pools(const CardTick& tick) {
    if (const std::optional<std::int64_t> sm = tick.readings.sm_active_cpct) {
        return *sm < k_gpm_light_sm_cpct;
    }
    const std::optional<double> load = load_share(tick);
    return load && *load < 0.3;
}

double& at(PoolTimes& pools, Pool pool) {
    return pools[static_cast<std::size_t>(pool)];
}

} // namespace

const char* to_string(Pool pool) {
    switch (pool) {
    case Pool::held_office:
        return "held_office";
    case Pool::held_off_hours:
        return "held_off_hours";
    case Pool::idle_office:
        return "idle_office";
    case Pool::idle_off_hours:
        return "idle_off_hours";
    case Pool::stall:
        return "stall";
    case Pool::headroom_under:
        return "headroom_under";
    case Pool::headroom_busy:
        return "headroom_busy";
    case Pool::compute_bound:
        return "compute_bound";
    case Pool::allocated_unused:
        return "allocated_unused";
    }
    return "";
}

bool is_off_hours(int weekday, int hour) {
    const bool workday = weekday >= 1 && weekday <= 5;
    return !workday || hour < k_office_first_hour || hour >= k_office_end_hour;
}

CardProfile& CardProfile::operator+=(const CardProfile& o) {
    office_us += o.office_us;
    off_hours_us += o.off_hours_us;
    steady_us += o.steady_us;
    bursty_us += o.bursty_us;
    steady_under_us += o.steady_under_us;
    steady_compute_bound_us += o.steady_compute_bound_us;
    for (std::size_t b = 0; b < k_bucket_count; ++b) {
        bursty_bucket_us[b] += o.bursty_bucket_us[b];
    }
    bursty_util_us += o.bursty_util_us;
    steady_under_util_us += o.steady_under_util_us;
    steady_compute_bound_util_us += o.steady_compute_bound_util_us;
    active_held_mib_us += o.active_held_mib_us;
    steady_under_held_mib_us += o.steady_under_held_mib_us;
    idle_held_mib_us += o.idle_held_mib_us;
    return *this;
}

std::int64_t held_mib(const CardTick& tick, const Thresholds& thresholds) {
    std::int64_t held = 0;
    for (const ProcTick& p : tick.processes) {
        if (is_holder(p, thresholds)) {
            held += std::max<std::int64_t>(p.mem_used_mib.value_or(0), 0);
        }
    }
    return held;
}

void add_to_pools(const CardTick& tick, const StateTimes& states, Pattern pattern,
                  std::int64_t held, bool off_hours, PoolTimes& pools, CardProfile& profile) {
    // Only the measured part of the tick: its unmeasured time belongs to no pool, and time lost
    // to a fault is nobody's waste (audit/fault_loss.hpp).
    const DurationUs duration = tick.duration_us - states.unmeasured - states.lost_to_faults;
    if (pattern == Pattern::unmeasured || duration <= 0) {
        return;
    }
    const auto d = static_cast<double>(duration);
    const auto held_d = static_cast<double>(held);
    (off_hours ? profile.off_hours_us : profile.office_us) += duration;

    const double util = mean_util_pct(tick);
    const double non_active =
        static_cast<double>(states.idle_held + states.truly_idle + states.allocated_unused);
    const double unused = d * (1.0 - util / 100.0);
    const double waste = std::clamp(std::max(unused, non_active), 0.0, d);
    if (pattern == Pattern::bursty) {
        at(pools, Pool::stall) += waste;
        profile.bursty_us += duration;
        profile.bursty_util_us += util * d;
        profile.active_held_mib_us += held_d * d;
        for (std::size_t b = 0; b < k_bucket_count; ++b) {
            profile.bursty_bucket_us[b] += tick.bucket_us[b];
        }
        return;
    }
    at(pools, off_hours ? Pool::held_off_hours : Pool::held_office) +=
        static_cast<double>(states.idle_held);
    at(pools, off_hours ? Pool::idle_off_hours : Pool::idle_office) +=
        static_cast<double>(states.truly_idle);
    at(pools, Pool::allocated_unused) += static_cast<double>(states.allocated_unused);
    profile.idle_held_mib_us += held_d * static_cast<double>(states.idle_held);
    const double headroom = std::max(waste - non_active, 0.0);
    at(pools, util < k_productive_floor_pct ? Pool::headroom_under : Pool::headroom_busy) +=
        headroom;
    if (pattern != Pattern::steady) {
        return;
    }
    profile.steady_us += duration;
    profile.active_held_mib_us += held_d * d;
    if (util < k_productive_floor_pct) {
        profile.steady_under_us += duration;
        profile.steady_under_util_us += util * d;
        profile.steady_under_held_mib_us += held_d * d;
    } else if (util >= k_compute_bound_floor_pct && !light_for_pools(tick)) {
        profile.steady_compute_bound_us += duration;
        profile.steady_compute_bound_util_us += util * d;
        at(pools, Pool::compute_bound) += d - waste;
    }
}

} // namespace gua::audit

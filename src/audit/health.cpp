// SPDX-License-Identifier: Apache-2.0
// Health totals: each card-tick's recorded health readings turned into summable integers.
#include "audit/health.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

namespace {

constexpr std::int64_t k_us_per_mj_per_mw = 1'000'000; // mW × µs / 1e6 = mJ
constexpr double k_mj_per_kwh_health = 3.6e9;

} // namespace

EnergyTotals& EnergyTotals::operator+=(const EnergyTotals& o) {
    counter_mj += o.counter_mj;
    counter_us += o.counter_us;
    power_mj += o.power_mj;
    power_us += o.power_us;
    for (std::size_t s = 0; s < state_mj.size(); ++s) {
        state_mj[s] += o.state_mj[s];
    }
    return *this;
}

ThrottleTotals& ThrottleTotals::operator+=(const ThrottleTotals& o) {
    events_active_us += o.events_active_us;
    for (std::size_t r = 0; r < reason_active_us.size(); ++r) {
        reason_active_us[r] += o.reason_active_us[r];
    }
    clock_active_us += o.clock_active_us;
    clock_mhz_ms += o.clock_mhz_ms;
    max_clock_mhz_ms += o.max_clock_mhz_ms;
    return *this;
}

ReadingField reason_field(ThrottleReason reason) {
    using R = telemetry::CardReadings;
    switch (reason) {
    case ThrottleReason::sw_power_cap:
        return &R::clocks_sw_power_cap_us;
    case ThrottleReason::hw_slowdown:
        return &R::clocks_hw_slowdown_us;
    case ThrottleReason::sw_thermal:
        return &R::clocks_sw_thermal_us;
    case ThrottleReason::hw_thermal:
        return &R::clocks_hw_thermal_us;
    case ThrottleReason::sync_boost:
        return &R::clocks_sync_boost_us;
    case ThrottleReason::hw_power_brake:
        return &R::clocks_hw_power_brake_us;
    }
    return &R::clocks_sw_power_cap_us;
}

ThrottleShares throttle_shares(const ThrottleTotals& t) {
    ThrottleShares s;
    if (t.events_active_us > 0) {
        const auto share = [&](ThrottleReason r) {
            return static_cast<double>(t.reason_active_us[static_cast<std::size_t>(r)]) /
                   static_cast<double>(t.events_active_us);
        };
        for (std::size_t k = 0; k < k_throttle_reason_count; ++k) {
            s.reason[k] = share(static_cast<ThrottleReason>(k));
        }
        s.thermal = std::max(share(ThrottleReason::sw_thermal), share(ThrottleReason::hw_thermal));
        s.power =
            std::max(share(ThrottleReason::sw_power_cap), share(ThrottleReason::hw_power_brake));
    }
    if (t.max_clock_mhz_ms > 0) {
        s.clock_ratio =
            static_cast<double>(t.clock_mhz_ms) / static_cast<double>(t.max_clock_mhz_ms);
    }
    return s;
}

MemoryTotals& MemoryTotals::operator+=(const MemoryTotals& o) {
    known_us += o.known_us;
    pressure_us += o.pressure_us;
    ghost_known_us += o.ghost_known_us;
    ghost_mib_ms += o.ghost_mib_ms;
    if (o.ghost_first_us != 0) {
        ghost_first_us =
            ghost_first_us == 0 ? o.ghost_first_us : std::min(ghost_first_us, o.ghost_first_us);
    }
    ghost_last_end_us = std::max(ghost_last_end_us, o.ghost_last_end_us);
    return *this;
}

ReadingField gpm_field(GpmMetric metric) {
    using R = telemetry::CardReadings;
    switch (metric) {
    case GpmMetric::sm_active:
        return &R::sm_active_cpct;
    case GpmMetric::sm_occupancy:
        return &R::sm_occupancy_cpct;
    case GpmMetric::tensor_active:
        return &R::tensor_active_cpct;
    case GpmMetric::dram_bw:
        return &R::dram_bw_cpct;
    case GpmMetric::fp64_active:
        return &R::fp64_active_cpct;
    case GpmMetric::fp32_active:
        return &R::fp32_active_cpct;
    case GpmMetric::fp16_active:
        break;
    }
    return &R::fp16_active_cpct;
}

std::optional<double> GpmTotals::mean(GpmMetric metric) const {
    const auto m = static_cast<std::size_t>(metric);
    if (active_us[m] <= 0) {
        return std::nullopt;
    }
    return static_cast<double>(cpct_ms[m]) /
           (10000.0 * static_cast<double>(active_us[m]) / static_cast<double>(k_us_per_ms));
}

GpmTotals& GpmTotals::operator+=(const GpmTotals& o) {
    for (std::size_t m = 0; m < k_gpm_metric_count; ++m) {
        active_us[m] += o.active_us[m];
        cpct_ms[m] += o.cpct_ms[m];
    }
    light_active_us += o.light_active_us;
    return *this;
}

HealthTotals& HealthTotals::operator+=(const HealthTotals& o) {
    energy += o.energy;
    throttle += o.throttle;
    memory += o.memory;
    gpm += o.gpm;
    fabric += o.fabric;
    for (std::size_t b = 0; b < k_load_bins; ++b) {
        load[b] += o.load[b];
    }
    return *this;
}

IdentityHealth& IdentityHealth::operator+=(const IdentityHealth& o) {
    energy_mj += o.energy_mj;
    energy_us += o.energy_us;
    for (std::size_t b = 0; b < k_load_bins; ++b) {
        load[b] += o.load[b];
    }
    return *this;
}

std::int64_t energy_cost_cents(std::int64_t mj, std::int64_t micros_per_kwh) {
    if (mj <= 0 || micros_per_kwh <= 0) {
        return 0;
    }
    // mJ × micros/kWh / (3.6e9 mJ/kWh × 1e4 micros/cent): exact enough in long double for
    // any realistic window (1 GWh at 100/kWh is 1e10 cents).
    const long double cents = static_cast<long double>(mj) *
                              static_cast<long double>(micros_per_kwh) /
                              (static_cast<long double>(k_mj_per_kwh_health) * 10'000.0L);
    return static_cast<std::int64_t>(std::floor(cents + 0.5L));
}

std::optional<double> load_share(const CardTick& tick) {
    const telemetry::CardReadings& r = tick.readings;
    if (!r.power_mw || !r.power_limit_mw || *r.power_limit_mw <= 0) {
        return std::nullopt;
    }
    return static_cast<double>(std::max<std::int64_t>(*r.power_mw, 0)) /
           static_cast<double>(*r.power_limit_mw);
}

std::size_t load_bin(double share) {
    const double bin = std::floor(share * static_cast<double>(k_load_bins));
    return bin <= 0 ? 0 : std::min(static_cast<std::size_t>(bin), k_load_bins - 1);
}

DurationUs light_us(const LoadBins& bins, int light_power_pct) {
    DurationUs light = 0;
    const auto below = static_cast<std::size_t>(std::clamp(light_power_pct / 5, 0, 20));
    for (std::size_t b = 0; b < below; ++b) {
        light += bins[b];
    }
    return light;
}

std::optional<TickEnergy> tick_energy(const CardTick& tick) {
    if (tick.readings.energy_mj) {
        return TickEnergy{std::max<std::int64_t>(*tick.readings.energy_mj, 0), true};
    }
    if (tick.readings.power_mw && tick.duration_us > 0) {
        const double mj = static_cast<double>(std::max<std::int64_t>(*tick.readings.power_mw, 0)) *
                          static_cast<double>(tick.duration_us) /
                          static_cast<double>(k_us_per_mj_per_mw);
        return TickEnergy{std::llround(mj), false};
    }
    return std::nullopt;
}

std::int64_t energy_part_mj(std::int64_t energy_mj, DurationUs part_us, DurationUs total_us) {
    if (total_us <= 0 || part_us <= 0) {
        return 0;
    }
    return std::llround(static_cast<double>(energy_mj) * static_cast<double>(part_us) /
                        static_cast<double>(total_us));
}

void add_health(const CardTick& tick, const StateTimes& states, HealthTotals& out) {
    const DurationUs total = states.total();
    if (const std::optional<TickEnergy> e = tick_energy(tick); e && total > 0) {
        EnergyTotals& en = out.energy;
        (e->from_counter ? en.counter_mj : en.power_mj) += e->mj;
        (e->from_counter ? en.counter_us : en.power_us) += total;
        // Largest parts first would be fairer; the unmeasured part takes the rounding so that
        // the states add up to the tick's energy exactly.
        const std::int64_t active = energy_part_mj(e->mj, states.active, total);
        const std::int64_t held = energy_part_mj(e->mj, states.idle_held, total);
        const std::int64_t idle = energy_part_mj(e->mj, states.truly_idle, total);
        const std::int64_t unused = energy_part_mj(e->mj, states.allocated_unused, total);
        en.state_mj[static_cast<std::size_t>(EnergyState::active)] += active;
        en.state_mj[static_cast<std::size_t>(EnergyState::idle_held)] += held;
        en.state_mj[static_cast<std::size_t>(EnergyState::truly_idle)] += idle;
        en.state_mj[static_cast<std::size_t>(EnergyState::allocated_unused)] += unused;
        en.state_mj[static_cast<std::size_t>(EnergyState::unmeasured)] +=
            e->mj - active - held - idle - unused;
    }
    const telemetry::CardReadings& r = tick.readings;
    MemoryTotals& mem = out.memory;
    if (r.mem_used_mib && r.mem_total_mib && *r.mem_total_mib > 0 && total > 0) {
        mem.known_us += total;
        if (static_cast<double>(*r.mem_used_mib) >=
            k_memory_pressure_share * static_cast<double>(*r.mem_total_mib)) {
            mem.pressure_us += total;
        }
    }
    if (r.ghost_mib && total > 0) {
        mem.ghost_known_us += total;
        if (*r.ghost_mib > k_ghost_floor_mib) {
            mem.ghost_mib_ms += *r.ghost_mib * (total / k_us_per_ms);
            MemoryTotals one;
            one.ghost_first_us = tick.t0;
            one.ghost_last_end_us = tick.t0 + total;
            mem += one;
        }
    }
    add_fabric(tick, states, out.fabric); // idle ticks too: links, replays, the remapper
    if (states.active <= 0) {
        return;
    }
    if (const std::optional<double> load = load_share(tick)) {
        out.load[load_bin(*load)] += states.active;
    }
    for (std::size_t m = 0; m < k_gpm_metric_count; ++m) {
        if (const std::optional<std::int64_t>& v = r.*gpm_field(static_cast<GpmMetric>(m)); v) {
            out.gpm.active_us[m] += states.active;
            out.gpm.cpct_ms[m] +=
                std::clamp<std::int64_t>(*v, 0, 10000) * (states.active / k_us_per_ms);
            if (m == static_cast<std::size_t>(GpmMetric::sm_active) && *v < k_gpm_light_sm_cpct) {
                out.gpm.light_active_us += states.active;
            }
        }
    }
    ThrottleTotals& th = out.throttle;
    bool events_read = false;
    for (std::size_t k = 0; k < k_throttle_reason_count; ++k) {
        if (const std::optional<std::int64_t>& us = r.*reason_field(static_cast<ThrottleReason>(k));
            us) {
            events_read = true;
            th.reason_active_us[k] += std::clamp<DurationUs>(*us, 0, states.active);
        }
    }
    th.events_active_us += events_read ? states.active : 0;
    if (r.sm_clock_mhz && r.max_sm_clock_mhz && *r.max_sm_clock_mhz > 0) {
        const std::int64_t ms = states.active / k_us_per_ms;
        th.clock_active_us += states.active;
        th.clock_mhz_ms += std::max<std::int64_t>(*r.sm_clock_mhz, 0) * ms;
        th.max_clock_mhz_ms += *r.max_sm_clock_mhz * ms;
    }
}

} // namespace gua::audit

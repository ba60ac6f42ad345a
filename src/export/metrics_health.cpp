// SPDX-License-Identifier: Apache-2.0
// The §9 health counters of one card: µs become seconds, mJ joules, MHz·ms hertz-seconds and
// %·100·ms ratio-seconds; docs/metrics.md lists the families.
#include "export/metrics_health.hpp"

#include "telemetry/exported_families.hpp"

#include <string>

namespace gua::exporter {

using telemetry::Family;
using telemetry::family_name;

namespace {

double seconds_of(std::int64_t us) {
    return static_cast<double>(us) / 1e6;
}

void add_energy(Exposition& e, const Labels& card, const audit::EnergyTotals& en) {
    const auto figure = [&](const char* name, DurationUs us) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", name),
              seconds_of(us));
    };
    figure("energy_counter", en.counter_us);
    figure("energy_power", en.power_us);
    for (std::size_t s = 0; s < audit::k_energy_state_names.size(); ++s) {
        if (static_cast<audit::EnergyState>(s) == audit::EnergyState::allocated_unused &&
            en.state_mj[s] == 0) {
            continue; // as gua_gpu_seconds_total: only once an allocation source reported one
        }
        e.add(family_name(Family::gpu_state_energy_joules_total),
              with(card, "state", audit::k_energy_state_names[s]),
              static_cast<double>(en.state_mj[s]) / 1e3);
    }
}

void add_throttle(Exposition& e, const Labels& card, const audit::ThrottleTotals& t) {
    if (t.events_active_us > 0) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", "clock_events"),
              seconds_of(t.events_active_us));
        for (std::size_t r = 0; r < audit::k_throttle_reason_count; ++r) {
            e.add(family_name(Family::gpu_throttle_seconds_total),
                  with(card, "reason", audit::k_throttle_reason_names[r]),
                  seconds_of(t.reason_active_us[r]));
        }
    }
    if (t.clock_active_us > 0) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", "sm_clock"),
              seconds_of(t.clock_active_us));
        // MHz × ms = 1e6 Hz × 1e-3 s.
        e.add(family_name(Family::gpu_sm_clock_hertz_seconds_total),
              with(card, "clock", "effective"), static_cast<double>(t.clock_mhz_ms) * 1e3);
        e.add(family_name(Family::gpu_sm_clock_hertz_seconds_total), with(card, "clock", "highest"),
              static_cast<double>(t.max_clock_mhz_ms) * 1e3);
    }
}

void add_memory(Exposition& e, const Labels& card, const audit::MemoryTotals& m) {
    if (m.known_us > 0) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", "memory"),
              seconds_of(m.known_us));
        e.add(family_name(Family::gpu_health_seconds_total),
              with(card, "figure", "memory_pressure"), seconds_of(m.pressure_us));
    }
    if (m.ghost_known_us > 0) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", "ghost"),
              seconds_of(m.ghost_known_us));
        // MiB × ms = 1048576 B × 1e-3 s.
        e.add(family_name(Family::gpu_ghost_bytes_seconds_total), card,
              static_cast<double>(m.ghost_mib_ms) * 1048.576);
    }
}

void add_load_and_gpm(Exposition& e, const Labels& card, const audit::HealthTotals& h) {
    for (std::size_t b = 0; b < audit::k_load_bins; ++b) {
        if (h.load[b] > 0) {
            e.add(family_name(Family::gpu_load_seconds_total),
                  with(card, "bin", std::to_string(b * 5)), seconds_of(h.load[b]));
        }
    }
    bool gpm = false;
    for (std::size_t m = 0; m < audit::k_gpm_metric_count; ++m) {
        if (h.gpm.active_us[m] <= 0) {
            continue;
        }
        gpm = true;
        const char* name = audit::k_gpm_metric_names[m];
        e.add(family_name(Family::gpu_gpm_seconds_total), with(card, "metric", name),
              seconds_of(h.gpm.active_us[m]));
        // %·100 × ms = 1e-4 × 1e-3 s.
        e.add(family_name(Family::gpu_gpm_ratio_seconds_total), with(card, "metric", name),
              static_cast<double>(h.gpm.cpct_ms[m]) / 1e7);
    }
    if (gpm) {
        e.add(family_name(Family::gpu_health_seconds_total), with(card, "figure", "gpm_light"),
              seconds_of(h.gpm.light_active_us));
    }
}

} // namespace

void add_health_series(Exposition& e, const Labels& card, const audit::HealthTotals& h) {
    if (h.energy.known_us() > 0) {
        add_energy(e, card, h.energy);
    }
    add_throttle(e, card, h.throttle);
    add_memory(e, card, h.memory);
    add_load_and_gpm(e, card, h);
}

} // namespace gua::exporter

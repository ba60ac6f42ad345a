// SPDX-License-Identifier: Apache-2.0
// The `health` object of the JSON report (§9): null wherever the text report says "n/a".
#include "audit/health.hpp"
#include "core/time.hpp"
#include "report/fabric_render.hpp"
#include "report/json_sections.hpp"

#include <algorithm>
#include <array>

namespace gua::report {

namespace {

using nlohmann::json;

template <typename T> json or_null(const std::optional<T>& v) {
    return v ? json(*v) : json();
}

/// `allocations`: the report recorded allocations, so allocated-unused energy has its own key.
json energy_json(const EnergyFigures& e, bool allocations) {
    const auto part = [&](std::size_t s) { return e.kwh ? json(e.state_kwh[s]) : json(); };
    json j{{"kwh", or_null(e.kwh)},
           {"active_kwh", part(0)},
           {"idle_held_kwh", part(1)},
           {"truly_idle_kwh", part(2)},
           {"unmeasured_kwh", part(3)},
           {"counter_gpu_hours", e.counter_hours},
           {"power_gpu_hours", e.power_hours},
           {"gpu_hours", e.card_hours}};
    if (allocations) {
        j["allocated_unused_kwh"] = part(4);
    }
    return j;
}

json throttle_json(const ThrottleFigures& t) {
    static constexpr std::array<const char*, 6> k_names{
        "sw_power_cap_share", "hw_slowdown_share", "sw_thermal_share",
        "hw_thermal_share",   "sync_boost_share",  "hw_power_brake_share"};
    json j{{"active_gpu_hours", t.active_hours},
           {"events_gpu_hours", t.events_hours},
           {"clock_ratio", or_null(t.clock_ratio)}};
    for (std::size_t k = 0; k < k_names.size(); ++k) {
        j[k_names[k]] = or_null(t.reason_share[k]);
    }
    return j;
}

json memory_json(const MemoryFigures& m) {
    const auto time = [](const std::optional<TimeUs>& t) {
        return t ? json(format_iso8601(*t)) : json();
    };
    return json{{"known_gpu_hours", m.known_hours},
                {"pressure_gpu_hours", m.pressure_hours},
                {"pressure_share", or_null(m.pressure_share)},
                {"ghost_known_gpu_hours", m.ghost_known_hours},
                {"ghost_gib_hours", or_null(m.ghost_gib_hours)},
                {"ghost_first_seen", time(m.ghost_first)},
                {"ghost_last_seen_end", time(m.ghost_last_end)}};
}

json gpm_json(const GpmFigures& g) {
    const auto& k_names = audit::k_gpm_metric_names;
    json j{{"active_gpu_hours", g.active_hours}};
    for (std::size_t k = 0; k < k_names.size(); ++k) {
        j[k_names[k]] = {{"mean", or_null(g.mean[k])}, {"known_gpu_hours", g.known_hours[k]}};
    }
    return j;
}

json light_json(const LightFigures& l) {
    return json{{"by", l.by.empty() ? json() : json(l.by)},
                {"known_active_gpu_hours", l.known_hours},
                {"light_gpu_hours", l.light_hours},
                {"share", or_null(l.share)},
                {"cents", or_null(l.cost_cents)}};
}

} // namespace

nlohmann::json health_json(const ReportModel& m) {
    if (!m.health) {
        return json();
    }
    const HealthSection& h = *m.health;
    json gpus = json::array();
    for (std::size_t i = 0; i < h.gpus.size(); ++i) {
        const GpuHealthRow& g = h.gpus[i];
        gpus.push_back({{"index", g.index},
                        {"uuid", i < m.gpus.size() ? m.gpus[i].uuid : g.short_uuid},
                        {"energy", energy_json(g.energy, m.allocation.has_value())},
                        {"throttle", throttle_json(g.throttle)},
                        {"memory", memory_json(g.memory)},
                        {"busy_but_light", light_json(g.light)},
                        {"gpm", gpm_json(g.gpm)}});
    }
    // Only where the driver gave some card an interconnect or bus reading (older files, and
    // drivers without them, keep their shape).
    if (std::any_of(h.gpus.begin(), h.gpus.end(),
                    [](const GpuHealthRow& g) { return fabric_read(g.fabric); })) {
        for (std::size_t i = 0; i < h.gpus.size(); ++i) {
            gpus[i]["fabric"] = fabric_json(h.gpus[i].fabric);
        }
    }
    json ids = json::array();
    for (const IdentityEnergyRow& r : h.identities) {
        ids.push_back({{"name", r.name},
                       {"kwh", or_null(r.kwh)},
                       {"gpu_hours", r.gpu_hours},
                       {"energy_known_gpu_hours", r.known_hours},
                       {"busy_but_light", light_json(r.light)}});
    }
    json findings = json::array();
    for (const HealthFinding& f : h.findings) {
        findings.push_back(
            {{"id", f.id}, {"gpu", f.gpu}, {"share", f.share}, {"detail", f.detail}});
    }
    json price;
    if (h.micros_per_kwh) {
        price = static_cast<double>(*h.micros_per_kwh) / 1e6;
    }
    return json{{"energy", energy_json(h.energy, m.allocation.has_value())},
                {"throttle", throttle_json(h.throttle)},
                {"findings", findings},
                {"light_power_pct", h.light_power_pct},
                {"busy_but_light", light_json(h.light)},
                {"gpus", gpus},
                {"identities", ids},
                {"currency", h.currency},
                {"price_per_kwh", price},
                {"grams_co2_per_kwh", or_null(h.grams_co2_per_kwh)},
                {"cost_cents", or_null(h.cost_cents)},
                {"idle_held_cost_cents", or_null(h.idle_held_cost_cents)},
                {"co2_kg", or_null(h.co2_kg)},
                {"idle_held_co2_kg", or_null(h.idle_held_co2_kg)}};
}

} // namespace gua::report

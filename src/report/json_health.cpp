// The `health` object of the JSON report (§9): null wherever the text report says "n/a".
#include "report/json_sections.hpp"

namespace gua::report {

namespace {

using nlohmann::json;

template <typename T> json or_null(const std::optional<T>& v) {
    return v ? json(*v) : json();
}

json energy_json(const EnergyFigures& e) {
    const auto part = [&](std::size_t s) { return e.kwh ? json(e.state_kwh[s]) : json(); };
    return json{{"kwh", or_null(e.kwh)},
                {"active_kwh", part(0)},
                {"idle_held_kwh", part(1)},
                {"truly_idle_kwh", part(2)},
                {"unmeasured_kwh", part(3)},
                {"counter_gpu_hours", e.counter_hours},
                {"power_gpu_hours", e.power_hours},
                {"gpu_hours", e.card_hours}};
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
                        {"energy", energy_json(g.energy)}});
    }
    json ids = json::array();
    for (const IdentityEnergyRow& r : h.identities) {
        ids.push_back({{"name", r.name},
                       {"kwh", or_null(r.kwh)},
                       {"gpu_hours", r.gpu_hours},
                       {"energy_known_gpu_hours", r.known_hours}});
    }
    json price;
    if (h.micros_per_kwh) {
        price = static_cast<double>(*h.micros_per_kwh) / 1e6;
    }
    return json{{"energy", energy_json(h.energy)},
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

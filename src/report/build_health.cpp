// SPDX-License-Identifier: Apache-2.0
// Report building for §9 Health: the audit sums the readings and decides the findings
// (audit/health_findings.cpp), this file converts units, prices the energy and maps the store's
// tables onto the model.
#include "report/build_health.hpp"

#include "audit/cost.hpp"
#include "audit/health_findings.hpp"
#include "core/time.hpp"
#include "report/health_remedies.hpp"
#include "report/shares.hpp"

#include <algorithm>
#include <map>

namespace gua::report {

namespace {

constexpr double k_health_mj_per_kwh = 3.6e9;

double kwh_of(std::int64_t mj) {
    return static_cast<double>(mj) / k_health_mj_per_kwh;
}

EnergyFigures energy_figures(const audit::EnergyTotals& e, DurationUs card_us) {
    EnergyFigures f;
    f.counter_hours = to_hours(e.counter_us);
    f.power_hours = to_hours(e.power_us);
    f.card_hours = to_hours(card_us);
    if (e.known_us() > 0) {
        f.kwh = kwh_of(e.total_mj());
        for (std::size_t s = 0; s < f.state_kwh.size(); ++s) {
            f.state_kwh[s] = kwh_of(e.state_mj[s]);
        }
    }
    return f;
}

ThrottleFigures throttle_figures(const audit::ThrottleTotals& t, DurationUs active_us) {
    ThrottleFigures f;
    f.active_hours = to_hours(active_us);
    f.events_hours = to_hours(t.events_active_us);
    const audit::ThrottleShares s = audit::throttle_shares(t);
    f.reason_share = s.reason;
    f.clock_ratio = s.clock_ratio;
    f.thermal_share = s.thermal;
    f.power_share = s.power;
    if (s.clock_ratio) {
        f.clock_lost_hours = to_hours(t.clock_active_us) * std::max(0.0, 1.0 - *s.clock_ratio);
    }
    return f;
}

MemoryFigures memory_figures(const audit::MemoryTotals& t) {
    MemoryFigures f;
    f.known_hours = to_hours(t.known_us);
    f.pressure_hours = to_hours(t.pressure_us);
    if (t.known_us > 0) {
        f.pressure_share = static_cast<double>(t.pressure_us) / static_cast<double>(t.known_us);
    }
    f.ghost_known_hours = to_hours(t.ghost_known_us);
    if (t.ghost_known_us > 0) {
        f.ghost_gib_hours = gib_hours_of_mib_ms(t.ghost_mib_ms);
    }
    if (t.ghost_first_us != 0) {
        f.ghost_first = t.ghost_first_us;
        f.ghost_last_end = t.ghost_last_end_us;
    }
    return f;
}

LightFigures light_figures(const audit::LightTimes& t) {
    LightFigures f;
    f.by = t.known <= 0 ? "" : t.by_gpm ? "gpm" : "power";
    f.known_hours = to_hours(t.known);
    f.light_hours = to_hours(t.light);
    if (t.known > 0) {
        f.share = static_cast<double>(t.light) / static_cast<double>(t.known);
    }
    return f;
}

GpmFigures gpm_figures(const audit::GpmTotals& t, DurationUs active_us) {
    GpmFigures f;
    f.active_hours = to_hours(active_us);
    for (std::size_t k = 0; k < audit::k_gpm_metric_count; ++k) {
        f.known_hours[k] = to_hours(t.active_us[k]);
        f.mean[k] = t.mean(static_cast<audit::GpmMetric>(k));
    }
    return f;
}

/// The fleet-wide sums of the cards' §9 figures, gathered card by card.
struct HealthSums {
    audit::EnergyTotals energy;
    DurationUs card_us = 0;
    audit::LightTimes light;
    int gpm_cards = 0;
    int power_cards = 0;
    std::int64_t light_cents = 0;
    bool load_known = false;
    audit::ThrottleTotals throttle;
    DurationUs active_us = 0;
};

/// One card's §9 row and findings, its light time priced at §7's price of the card.
void add_card_health(const CardHealthInput& c, int light_power_pct, HealthSection& h,
                     HealthSums& sums) {
    const audit::HealthTotals& t = c.health;
    sums.energy += t.energy;
    sums.card_us += c.states.total();
    sums.throttle += t.throttle;
    sums.active_us += c.states.active;
    const audit::LightTimes card_light = audit::light_times(t.load, &t.gpm, light_power_pct);
    h.gpus.push_back(GpuHealthRow{
        c.index, short_uuid(c.uuid), c.model, energy_figures(t.energy, c.states.total()),
        throttle_figures(t.throttle, c.states.active), memory_figures(t.memory),
        light_figures(card_light), gpm_figures(t.gpm, c.states.active), t.fabric});
    const std::size_t first_finding = h.findings.size();
    audit::add_throttle_findings(c.index, t.throttle, h.findings);
    audit::add_memory_findings(c.index, t.memory, h.findings);
    audit::add_gpm_findings(c.index, t.gpm, c.states.active, h.findings);
    audit::add_fabric_findings(c.index, t.fabric, h.findings);
    LightFigures& light = h.gpus.back().light;
    if (light.share && c.micros_per_gpu_hour) {
        light.cost_cents = audit::cost_cents(card_light.light, *c.micros_per_gpu_hour);
        sums.light_cents += *light.cost_cents;
    }
    sums.load_known = sums.load_known || light.share.has_value();
    sums.light.known += card_light.known;
    sums.light.light += card_light.light;
    if (card_light.known > 0) {
        (card_light.by_gpm ? sums.gpm_cards : sums.power_cards) += 1;
    }
    audit::add_light_finding(c.index, card_light, light_power_pct, h.findings);
    for (std::size_t f = first_finding; f < h.findings.size() && !c.host.empty(); ++f) {
        h.findings[f].detail = c.host + ": " + h.findings[f].detail;
    }
}

/// The fleet's §9 figures from the cards' sums: energy (priced, in CO2), throttling, light time.
void add_fleet_health(const HealthSums& sums, HealthSection& h) {
    const audit::EnergyTotals& all = sums.energy;
    h.energy = energy_figures(all, sums.card_us);
    h.throttle = throttle_figures(sums.throttle, sums.active_us);
    h.light = light_figures(sums.light);
    if (sums.gpm_cards > 0 && sums.power_cards > 0) {
        h.light.by = "gpm+power";
    } else if (sums.gpm_cards > 0) {
        h.light.by = "gpm";
    }
    if (sums.load_known) {
        h.light.cost_cents = sums.light_cents;
    }
    if (all.known_us() > 0) {
        const std::int64_t held_mj =
            all.state_mj[static_cast<std::size_t>(audit::EnergyState::idle_held)];
        if (h.micros_per_kwh) {
            h.cost_cents = audit::energy_cost_cents(all.total_mj(), *h.micros_per_kwh);
            h.idle_held_cost_cents = audit::energy_cost_cents(held_mj, *h.micros_per_kwh);
        }
        if (h.grams_co2_per_kwh) {
            h.co2_kg = kwh_of(all.total_mj()) * *h.grams_co2_per_kwh / 1000.0;
            h.idle_held_co2_kg = kwh_of(held_mj) * *h.grams_co2_per_kwh / 1000.0;
        }
    }
}

/// Identities grouped as §4 groups them (by user or team), nobody as "(no process)".
std::map<std::string, audit::IdentityTotals>
group_identities(const audit::WindowAccumulator& acc,
                 const std::vector<store::IdentityRow>& identities, const BuildOptions& options) {
    std::map<std::string, audit::IdentityTotals> by_group;
    for (const store::IdentityRow& i : identities) {
        const auto id = static_cast<std::size_t>(i.id);
        if (id >= acc.identities().size() || acc.identities()[id].ticks == 0) {
            continue;
        }
        by_group[options.grouping.group_of(i.identity)] += acc.identities()[id];
    }
    if (!acc.identities().empty() && acc.identities()[0].ticks > 0) {
        by_group["(no process)"] += acc.identities()[0];
    }
    return by_group;
}

/// Imbalance: an identity on several cards whose activity differs (load imbalance, straggler).
void add_imbalance(const std::map<std::string, audit::IdentityTotals>& by_group,
                   const std::vector<store::GpuRow>& gpus, HealthSection& h) {
    std::map<std::int64_t, int> index_of;
    for (const store::GpuRow& g : gpus) {
        index_of[g.id] = g.index;
    }
    for (const auto& [name, totals] : by_group) {
        if (name == "(no process)") {
            continue;
        }
        std::vector<audit::CardActivity> cards;
        for (const audit::IdentityGpuTime& t : totals.by_gpu) {
            const auto index = index_of.find(t.gpu);
            cards.push_back(audit::CardActivity{index == index_of.end() ? -1 : index->second,
                                                t.active_us, t.idle_held_us});
        }
        audit::add_imbalance_finding(name, cards, h.findings);
    }
}

} // namespace

HealthSection build_card_health(const std::vector<CardHealthInput>& cards,
                                const BuildOptions& options) {
    HealthSection h;
    h.currency = options.pricing.currency;
    h.micros_per_kwh = options.energy.micros_per_kwh;
    h.grams_co2_per_kwh = options.energy.grams_co2_per_kwh;
    h.light_power_pct = options.health.light_power_pct;
    HealthSums sums;
    for (const CardHealthInput& c : cards) {
        add_card_health(c, h.light_power_pct, h, sums);
    }
    add_fleet_health(sums, h);
    return h;
}

void build_health(const audit::WindowAccumulator& acc, const std::vector<store::GpuRow>& gpus,
                  const std::vector<store::IdentityRow>& identities, const BuildOptions& options,
                  ReportModel& m) {
    std::vector<CardHealthInput> cards;
    for (const store::GpuRow& g : gpus) {
        const auto id = static_cast<std::size_t>(g.id);
        if (id >= acc.gpus().size() || acc.gpus()[id].ticks == 0) {
            continue;
        }
        const audit::GpuTotals& t = acc.gpus()[id];
        CardHealthInput c{g.index, g.uuid, g.name, {}, t.states, t.health, std::nullopt};
        const auto priced = std::find_if(m.cost.gpus.begin(), m.cost.gpus.end(),
                                         [&](const GpuCostRow& p) { return p.index == g.index; });
        if (priced != m.cost.gpus.end()) {
            c.micros_per_gpu_hour = priced->micros_per_gpu_hour;
        }
        cards.push_back(std::move(c));
    }
    HealthSection h = build_card_health(cards, options);
    const std::map<std::string, audit::IdentityTotals> by_group =
        group_identities(acc, identities, options);
    add_imbalance(by_group, gpus, h);
    const int light_power_pct = options.health.light_power_pct;
    for (const IdentityRow& row : m.identities) {
        IdentityEnergyRow e;
        e.name = row.name;
        e.gpu_hours = row.gpu_hours;
        if (const auto found = by_group.find(row.name); found != by_group.end()) {
            const audit::IdentityHealth& ih = found->second.health;
            e.light = light_figures(audit::light_times(ih.load, nullptr, light_power_pct));
            e.known_hours = to_hours(ih.energy_us);
            if (ih.energy_us > 0) {
                e.kwh = kwh_of(ih.energy_mj);
            }
        }
        h.identities.push_back(e);
    }
    h.remedies = health_remedies(h, m.cost.gpus, gpus);
    m.health = std::move(h);
}

} // namespace gua::report

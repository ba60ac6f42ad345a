// SPDX-License-Identifier: Apache-2.0
// Report building for §9 Health: the audit sums the readings, this file converts units, prices
// the energy and maps the store's tables onto the model.
#include "report/build_health.hpp"

#include "audit/cost.hpp"
#include "audit/health.hpp"
#include "audit/imbalance.hpp"
#include "core/time.hpp"
#include "report/health_remedies.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

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

void add_throttle_findings(int gpu, const audit::ThrottleTotals& t,
                           std::vector<HealthFinding>& out) {
    const audit::ThrottleShares s = audit::throttle_shares(t);
    const auto pct = [&](audit::ThrottleReason r) {
        return 100.0 * s.reason[static_cast<std::size_t>(r)].value_or(0);
    };
    const std::string clock =
        s.clock_ratio
            ? fmt::format("; SM clock {:.0f}% of its highest while active", 100.0 * *s.clock_ratio)
            : std::string();
    if (s.thermal && *s.thermal >= audit::k_throttle_finding_share) {
        out.push_back(HealthFinding{
            "thermal-throttling", gpu, *s.thermal,
            fmt::format("GPU {}: clocks held back by heat {:.1f}% of active time (software "
                        "thermal {:.1f}%, hardware thermal {:.1f}%){}",
                        gpu, 100.0 * *s.thermal, pct(audit::ThrottleReason::sw_thermal),
                        pct(audit::ThrottleReason::hw_thermal), clock)});
    }
    if (s.power && *s.power >= audit::k_throttle_finding_share) {
        out.push_back(HealthFinding{
            "power-capping", gpu, *s.power,
            fmt::format("GPU {}: clocks held back by the power limit {:.1f}% of active time "
                        "(power cap {:.1f}%, power brake {:.1f}%){}",
                        gpu, 100.0 * *s.power, pct(audit::ThrottleReason::sw_power_cap),
                        pct(audit::ThrottleReason::hw_power_brake), clock)});
    }
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

void add_memory_findings(int gpu, const MemoryFigures& f, std::vector<HealthFinding>& out) {
    if (f.pressure_share && *f.pressure_share >= audit::k_memory_pressure_finding_share) {
        out.push_back(HealthFinding{
            "memory-pressure", gpu, *f.pressure_share,
            fmt::format("GPU {}: memory used at or above {:.0f}% of the total for {} card-hours "
                        "({:.1f}% of its time with memory read)",
                        gpu, 100.0 * audit::k_memory_pressure_share,
                        fmt::format("{:.2f}", f.pressure_hours), 100.0 * *f.pressure_share)});
    }
    if (f.ghost_gib_hours && *f.ghost_gib_hours > 0 && f.ghost_first) {
        out.push_back(HealthFinding{
            "ghost-memory", gpu, 0,
            fmt::format("GPU {}: {:.2f} GiB-hours of memory held with no live process accounting "
                        "for it, seen from {} to {}",
                        gpu, *f.ghost_gib_hours, format_iso8601(*f.ghost_first),
                        format_iso8601(*f.ghost_last_end))});
    }
}

/// Light and judged active time of a card or identity: by GPM SM active where the card read it
/// (what the SMs did), else by power over its limit in the load bins.
struct LightTimes {
    DurationUs known = 0;
    DurationUs light = 0;
    bool by_gpm = false;
};

LightTimes light_times(const audit::LoadBins& bins, const audit::GpmTotals* gpm,
                       int light_power_pct) {
    const auto sm = static_cast<std::size_t>(audit::GpmMetric::sm_active);
    if (gpm != nullptr && gpm->active_us[sm] > 0) {
        return LightTimes{gpm->active_us[sm], gpm->light_active_us, true};
    }
    LightTimes t;
    for (DurationUs b : bins) {
        t.known += b;
    }
    t.light = audit::light_us(bins, light_power_pct);
    return t;
}

LightFigures light_figures(const LightTimes& t) {
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

/// Tensor pipes idle while FP32 math runs, and DRAM-bound work, from GPM readings that cover at
/// least half of the card's active time (docs/health.md).
void add_gpm_findings(int gpu, const GpmFigures& f, std::vector<HealthFinding>& out) {
    const auto covered = [&](audit::GpmMetric m) {
        const auto k = static_cast<std::size_t>(m);
        return f.mean[k] && f.active_hours > 0 &&
               f.known_hours[k] >= audit::k_gpm_min_coverage * f.active_hours;
    };
    const auto mean = [&](audit::GpmMetric m) { return *f.mean[static_cast<std::size_t>(m)]; };
    using M = audit::GpmMetric;
    if (covered(M::tensor_active) && covered(M::fp32_active) &&
        mean(M::tensor_active) < audit::k_tensor_idle_max_share &&
        mean(M::fp32_active) >= audit::k_tensor_idle_min_fp32_share) {
        out.push_back(HealthFinding{
            "tensor-idle", gpu, mean(M::fp32_active),
            fmt::format("GPU {}: over {:.2f} active card-hours with GPM readings, the FP32 pipes "
                        "were active {:.1f}% of the time and the tensor pipes {:.1f}%: the math "
                        "runs on CUDA cores, not on Tensor Cores",
                        gpu, f.known_hours[static_cast<std::size_t>(M::fp32_active)],
                        100.0 * mean(M::fp32_active), 100.0 * mean(M::tensor_active))});
    }
    if (covered(M::dram_bw) && mean(M::dram_bw) >= audit::k_dram_bound_min_share) {
        out.push_back(HealthFinding{
            "dram-bound", gpu, mean(M::dram_bw),
            fmt::format(
                "GPU {}: over {:.2f} active card-hours with GPM readings, DRAM bandwidth "
                "averaged {:.1f}% of its peak{}",
                gpu, f.known_hours[static_cast<std::size_t>(M::dram_bw)], 100.0 * mean(M::dram_bw),
                covered(M::sm_active) ? fmt::format(" with the SMs active {:.1f}% of the time",
                                                    100.0 * mean(M::sm_active))
                                      : std::string())});
    }
}

} // namespace

void build_health(const audit::WindowAccumulator& acc, const std::vector<store::GpuRow>& gpus,
                  const std::vector<store::IdentityRow>& identities, const BuildOptions& options,
                  ReportModel& m) {
    HealthSection h;
    h.currency = options.pricing.currency;
    h.micros_per_kwh = options.energy.micros_per_kwh;
    h.grams_co2_per_kwh = options.energy.grams_co2_per_kwh;
    audit::EnergyTotals all;
    DurationUs all_us = 0;
    const audit::HealthRules& rules = options.health;
    h.light_power_pct = rules.light_power_pct;
    LightTimes all_light;
    int gpm_cards = 0;
    int power_cards = 0;
    std::int64_t light_cents = 0;
    bool all_load_known = false;
    audit::ThrottleTotals all_throttle;
    DurationUs all_active_us = 0;
    for (const store::GpuRow& g : gpus) {
        const auto id = static_cast<std::size_t>(g.id);
        if (id >= acc.gpus().size() || acc.gpus()[id].ticks == 0) {
            continue;
        }
        const audit::GpuTotals& t = acc.gpus()[id];
        all += t.health.energy;
        all_us += t.states.total();
        all_throttle += t.health.throttle;
        all_active_us += t.states.active;
        const LightTimes card_light =
            light_times(t.health.load, &t.health.gpm, rules.light_power_pct);
        h.gpus.push_back(GpuHealthRow{
            g.index, short_uuid(g.uuid), g.name, energy_figures(t.health.energy, t.states.total()),
            throttle_figures(t.health.throttle, t.states.active), memory_figures(t.health.memory),
            light_figures(card_light), gpm_figures(t.health.gpm, t.states.active)});
        add_throttle_findings(g.index, t.health.throttle, h.findings);
        add_memory_findings(g.index, h.gpus.back().memory, h.findings);
        add_gpm_findings(g.index, h.gpus.back().gpm, h.findings);
        LightFigures& light = h.gpus.back().light;
        const auto priced = std::find_if(m.cost.gpus.begin(), m.cost.gpus.end(),
                                         [&](const GpuCostRow& c) { return c.index == g.index; });
        if (light.share && priced != m.cost.gpus.end()) {
            light.cost_cents = audit::cost_cents(card_light.light, priced->micros_per_gpu_hour);
            light_cents += *light.cost_cents;
        }
        all_load_known = all_load_known || light.share.has_value();
        all_light.known += card_light.known;
        all_light.light += card_light.light;
        if (card_light.known > 0) {
            (card_light.by_gpm ? gpm_cards : power_cards) += 1;
        }
        if (light.share && *light.share >= audit::k_light_finding_share) {
            h.findings.push_back(HealthFinding{
                "busy-but-light", g.index, *light.share,
                card_light.by_gpm
                    ? fmt::format("GPU {}: {:.2f} of {:.2f} active card-hours ({:.1f}%) had the "
                                  "SMs active less than {}% of the time (GPM)",
                                  g.index, light.light_hours, light.known_hours,
                                  100.0 * *light.share, audit::k_gpm_light_sm_cpct / 100)
                    : fmt::format("GPU {}: {:.2f} of {:.2f} active card-hours ({:.1f}%) drew less "
                                  "than {}% of the power limit",
                                  g.index, light.light_hours, light.known_hours,
                                  100.0 * *light.share, rules.light_power_pct)});
        }
    }
    h.energy = energy_figures(all, all_us);
    h.throttle = throttle_figures(all_throttle, all_active_us);
    h.light = light_figures(all_light);
    if (gpm_cards > 0 && power_cards > 0) {
        h.light.by = "gpm+power";
    } else if (gpm_cards > 0) {
        h.light.by = "gpm";
    }
    if (all_load_known) {
        h.light.cost_cents = light_cents;
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

    // Identities grouped as §4 groups them (by user or team), nobody as "(no process)".
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
    // Imbalance: an identity on several cards whose activity differs (load imbalance, straggler).
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
        const std::optional<audit::Imbalance> spread =
            audit::imbalance(cards, audit::k_imbalance_min_us);
        if (spread && spread->busiest_share - spread->idlest_share >= audit::k_imbalance_share) {
            h.findings.push_back(HealthFinding{
                "imbalance", spread->idlest_gpu, spread->busiest_share - spread->idlest_share,
                fmt::format("{} held {} cards: GPU {} active {:.1f}% of its held time, GPU {} "
                            "{:.1f}%",
                            name, cards.size(), spread->busiest_gpu, 100.0 * spread->busiest_share,
                            spread->idlest_gpu, 100.0 * spread->idlest_share)});
        }
    }
    for (const IdentityRow& row : m.identities) {
        IdentityEnergyRow e;
        e.name = row.name;
        e.gpu_hours = row.gpu_hours;
        if (const auto found = by_group.find(row.name); found != by_group.end()) {
            const audit::IdentityHealth& ih = found->second.health;
            e.light = light_figures(light_times(ih.load, nullptr, rules.light_power_pct));
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

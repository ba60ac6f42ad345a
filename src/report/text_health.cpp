// SPDX-License-Identifier: Apache-2.0
// §9 Health as text: formatting only, every number comes from the model; "n/a" where no reading.
#include "core/time.hpp"
#include "core/units.hpp"
#include "report/fabric_render.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::report {

namespace {

std::string kwh_text(const std::optional<double>& kwh) {
    return kwh ? format_hours(*kwh) : "n/a";
}

/// Where a card's energy came from: the counter, power × time, both, or n/a.
std::string energy_source(const EnergyFigures& e) {
    if (e.counter_hours > 0 && e.power_hours > 0) {
        return "counter + power × time";
    }
    if (e.counter_hours > 0) {
        return "energy counter";
    }
    return e.power_hours > 0 ? "power × time" : "n/a";
}

/// The share of a figure's card-hours that it covers, when not all: " (covers 12.0 of 24.0 h)".
std::string partial(double known_hours, double card_hours) {
    if (card_hours <= 0 || known_hours >= card_hours * (1 - 1e-9)) {
        return "";
    }
    return fmt::format(" (covers {} of {} card-hours)", format_hours(known_hours),
                       format_hours(card_hours));
}

void energy_table(std::string& out, const HealthSection& h) {
    out += "  energy (kWh)\n";
    out += fmt::format("  {:>3}  {:<12}  {:<25} {:>9} {:>9} {:>10} {:>11}  {}\n", "gpu", "uuid",
                       "model", "total", "active", "idle-held", "truly-idle", "source");
    const auto row = [&](const std::string& head, const EnergyFigures& e) {
        const auto part = [&](std::size_t s) {
            return e.kwh ? format_hours(e.state_kwh[s]) : std::string("n/a");
        };
        out += fmt::format("  {:<43} {:>9} {:>9} {:>10} {:>11}  {}{}\n", head, kwh_text(e.kwh),
                           part(0), part(1), part(2), energy_source(e),
                           e.kwh ? partial(e.counter_hours + e.power_hours, e.card_hours) : "");
    };
    for (const GpuHealthRow& g : h.gpus) {
        row(fmt::format("{:>3}  {:<12}  {:<25}", g.index, g.short_uuid, g.model.substr(0, 25)),
            g.energy);
    }
    if (h.gpus.size() > 1) {
        row("all", h.energy);
    }
}

void energy_money(std::string& out, const HealthSection& h) {
    const EnergyFigures& e = h.energy;
    if (!e.kwh) {
        return;
    }
    const double held = e.state_kwh[1];
    out += fmt::format("  idle-held energy (pure waste): {} kWh, {:.1f}% of the energy\n",
                       format_hours(held), *e.kwh > 0 ? 100.0 * held / *e.kwh : 0.0);
    if (h.cost_cents && h.micros_per_kwh) {
        out += fmt::format("  electricity: {} at {}/kWh (idle-held {})\n",
                           format_money(*h.cost_cents, h.currency),
                           format_micros(*h.micros_per_kwh, h.currency),
                           format_money(h.idle_held_cost_cents.value_or(0), h.currency));
    } else {
        out += "  electricity: n/a (set [energy] price_per_kwh in gua.toml)\n";
    }
    if (h.co2_kg && h.grams_co2_per_kwh) {
        out += fmt::format("  CO2: {:.2f} kg at {:g} g/kWh (idle-held {:.2f} kg)\n", *h.co2_kg,
                           *h.grams_co2_per_kwh, h.idle_held_co2_kg.value_or(0));
    } else {
        out += "  CO2: n/a (set [energy] grams_co2_per_kwh in gua.toml)\n";
    }
}

void energy_identities(std::string& out, const HealthSection& h) {
    if (h.identities.empty()) {
        return;
    }
    out += "  energy by identity (its active + idle-held time, as §4 splits it)\n";
    for (const IdentityEnergyRow& r : h.identities) {
        out += fmt::format("    {:<20} {:>9} kWh{}\n", r.name.substr(0, 20), kwh_text(r.kwh),
                           r.kwh ? partial(r.known_hours, r.gpu_hours) : "");
    }
}

std::string share_text(const std::optional<double>& share) {
    return share ? fmt::format("{:.1f}%", 100.0 * *share) : "n/a";
}

void throttle_table(std::string& out, const HealthSection& h) {
    out += "  clocks while active (share of active time with each clocks-event reason)\n";
    out += fmt::format("  {:>3}  {:>9}  {:>11}  {:>10}  {:>10}  {:>10}  {:>11}  {:>12}\n", "gpu",
                       "power cap", "hw slowdown", "sw thermal", "hw thermal", "sync boost",
                       "power brake", "SM clock/max");
    const auto row = [&](const std::string& head, const ThrottleFigures& t) {
        const auto& r = t.reason_share;
        out += fmt::format("  {:>3}  {:>9}  {:>11}  {:>10}  {:>10}  {:>10}  {:>11}  {:>12}{}\n",
                           head, share_text(r[0]), share_text(r[1]), share_text(r[2]),
                           share_text(r[3]), share_text(r[4]), share_text(r[5]),
                           t.clock_ratio ? fmt::format("{:.0f}%", 100.0 * *t.clock_ratio) : "n/a",
                           r[0] ? partial(t.events_hours, t.active_hours) : "");
    };
    for (const GpuHealthRow& g : h.gpus) {
        row(std::to_string(g.index), g.throttle);
    }
    if (h.gpus.size() > 1) {
        row("all", h.throttle);
    }
}

void memory_table(std::string& out, const HealthSection& h) {
    out += fmt::format("  memory\n  {:>3}  {:>14}  {:>15}  {}\n", "gpu", "at/above 90%",
                       "ghost GiB-hours", "ghost memory seen");
    for (const GpuHealthRow& g : h.gpus) {
        const MemoryFigures& m = g.memory;
        const std::string ghost_hours =
            m.ghost_gib_hours ? format_hours(*m.ghost_gib_hours) : std::string("n/a");
        const std::string seen = m.ghost_first
                                     ? fmt::format("{} → {}", format_iso8601(*m.ghost_first),
                                                   format_iso8601(*m.ghost_last_end))
                                     : std::string(m.ghost_gib_hours ? "never" : "n/a");
        out += fmt::format("  {:>3}  {:>14}  {:>15}  {}\n", g.index, share_text(m.pressure_share),
                           ghost_hours, seen);
    }
}

void gpm_table(std::string& out, const HealthSection& h) {
    bool any = false;
    for (const GpuHealthRow& g : h.gpus) {
        for (const auto& v : g.gpm.mean) {
            any = any || v.has_value();
        }
    }
    if (!any) {
        out += "  GPM while active: n/a (no card read GPM: Hopper or newer with a recent driver)\n";
        return;
    }
    out += "  GPM while active (mean share of active time)\n";
    out += fmt::format("  {:>3}  {:>9}  {:>9}  {:>7}  {:>7}  {:>6}  {:>6}  {:>6}\n", "gpu",
                       "SM active", "occupancy", "tensor", "DRAM", "FP64", "FP32", "FP16");
    for (const GpuHealthRow& g : h.gpus) {
        const auto& v = g.gpm.mean;
        out += fmt::format("  {:>3}  {:>9}  {:>9}  {:>7}  {:>7}  {:>6}  {:>6}  {:>6}{}\n", g.index,
                           share_text(v[0]), share_text(v[1]), share_text(v[2]), share_text(v[3]),
                           share_text(v[4]), share_text(v[5]), share_text(v[6]),
                           v[0] ? partial(g.gpm.known_hours[0], g.gpm.active_hours) : "");
    }
}

void light_table(std::string& out, const HealthSection& h, const std::string& currency) {
    out += fmt::format("  busy but light (active with the SMs active < 20% of the time where GPM "
                       "read it, else drawing < {}% of the power limit)\n",
                       h.light_power_pct);
    out += fmt::format("  {:>3}  {:>12}  {:>10}  {:>12}  {}\n", "gpu", "card-hours", "of active",
                       "cost", "by");
    const auto row = [&](const std::string& head, const LightFigures& l) {
        out += fmt::format("  {:>3}  {:>12}  {:>10}  {:>12}{}\n", head,
                           l.share ? format_hours(l.light_hours) : std::string("n/a"),
                           share_text(l.share),
                           l.cost_cents ? format_money(*l.cost_cents, currency) : "n/a",
                           l.by.empty() ? "" : "  " + l.by);
    };
    for (const GpuHealthRow& g : h.gpus) {
        row(std::to_string(g.index), g.light);
    }
    if (h.gpus.size() > 1) {
        row("all", h.light);
    }
    bool any = false;
    for (const IdentityEnergyRow& r : h.identities) {
        any = any || r.light.share.has_value();
    }
    if (!any) {
        return;
    }
    out += "  busy but light by identity (its attributed active time)\n";
    for (const IdentityEnergyRow& r : h.identities) {
        if (r.light.share) {
            out += fmt::format("    {:<20} {:>10} card-hours  {:>6} of its measured active time\n",
                               r.name.substr(0, 20), format_hours(r.light.light_hours),
                               share_text(r.light.share));
        }
    }
}

/// NVLink, PCIe and row remapping: shown when the driver gave any of these readings for some
/// card, then for every card ("n/a" where not read).
void fabric_table(std::string& out, const HealthSection& h) {
    if (std::none_of(h.gpus.begin(), h.gpus.end(),
                     [](const GpuHealthRow& g) { return fabric_read(g.fabric); })) {
        return;
    }
    out += "  interconnect and bus (rates per hour of the time read)\n";
    for (const GpuHealthRow& g : h.gpus) {
        out += fabric_text_line(g.index, g.fabric);
    }
}

void findings(std::string& out, const HealthSection& h) {
    if (h.findings.empty()) {
        return;
    }
    out += "  findings (what to do: §8's health remedies, docs/health.md)\n";
    for (const HealthFinding& f : h.findings) {
        out += fmt::format("    {}: {}\n", f.id, f.detail);
    }
}

} // namespace

void render_health_text(std::string& out, const ReportModel& m) {
    out += "§9 Health\n";
    if (!m.health) {
        out += "  (n/a: this source has no health readings)\n";
        return;
    }
    const HealthSection& h = *m.health;
    if (h.gpus.empty()) {
        out += "  (no GPU cards in window)\n";
        return;
    }
    energy_table(out, h);
    energy_money(out, h);
    energy_identities(out, h);
    throttle_table(out, h);
    memory_table(out, h);
    gpm_table(out, h);
    light_table(out, h, h.currency);
    fabric_table(out, h);
    findings(out, h);
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// §9 Health and Data coverage as HTML tables: formatting only; "n/a" where there was no reading.
#include "core/duration.hpp"
#include "core/time.hpp"
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gua::report::html {

namespace {

/// A numeric cell: the value marked with its JSON field, or "n/a".
std::string cell(const std::string& path, const std::optional<double>& v, const std::string& text) {
    return num_td(v ? number(path, *v, text) : "n/a");
}

std::string share_text(const std::optional<double>& s) {
    return s ? fmt::format("{:.1f}%", *s * 100.0) : "n/a";
}

std::string kwh_cells(const std::string& key, const EnergyFigures& e) {
    std::string out = cell(key + "kwh", e.kwh, e.kwh ? format_hours(*e.kwh) : "");
    static constexpr std::array<const char*, 3> k_parts{"active_kwh", "idle_held_kwh",
                                                        "truly_idle_kwh"};
    for (std::size_t s = 0; s < k_parts.size(); ++s) {
        const std::optional<double> v = e.kwh ? std::optional(e.state_kwh[s]) : std::nullopt;
        out += cell(key + k_parts[s], v, v ? format_hours(*v) : "");
    }
    return out;
}

void energy(std::string& out, const HealthSection& h) {
    out += table_open({"gpu", "model", "#total", "#active", "#idle-held", "#truly idle"},
                      "Energy (kWh)");
    for (std::size_t i = 0; i < h.gpus.size(); ++i) {
        const GpuHealthRow& g = h.gpus[i];
        out += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td>{}</tr>", g.index, esc(g.model),
                           kwh_cells(fmt::format("health.gpus.{}.energy.", i), g.energy));
    }
    out +=
        fmt::format("<tr class=\"sum\"><td colspan=\"2\">all</td>{}</tr></tbody></table></div>\n",
                    kwh_cells("health.energy.", h.energy));
    if (h.energy.kwh) {
        out += "<p class=\"small\">";
        if (h.cost_cents && h.micros_per_kwh) {
            out += fmt::format("Electricity {} at {}/kWh (idle-held {}). ",
                               number("health.cost_cents", static_cast<double>(*h.cost_cents),
                                      format_money(*h.cost_cents, h.currency)),
                               esc(format_micros(*h.micros_per_kwh, h.currency)),
                               esc(format_money(h.idle_held_cost_cents.value_or(0), h.currency)));
        } else {
            out += "Electricity: n/a (set [energy] price_per_kwh in gua.toml). ";
        }
        if (h.co2_kg && h.grams_co2_per_kwh) {
            out += fmt::format("CO₂ {} kg at {:g} g/kWh (idle-held {:.2f} kg).",
                               number("health.co2_kg", *h.co2_kg, fmt::format("{:.2f}", *h.co2_kg)),
                               *h.grams_co2_per_kwh, h.idle_held_co2_kg.value_or(0));
        } else {
            out += "CO₂: n/a (set [energy] grams_co2_per_kwh in gua.toml).";
        }
        out += "</p>\n";
    }
}

void clocks(std::string& out, const HealthSection& h) {
    static constexpr std::array<const char*, 6> k_keys{
        "sw_power_cap_share", "hw_slowdown_share", "sw_thermal_share",
        "hw_thermal_share",   "sync_boost_share",  "hw_power_brake_share"};
    out += table_open({"gpu", "#power cap", "#hw slowdown", "#sw thermal", "#hw thermal",
                       "#sync boost", "#power brake", "#SM clock / max"},
                      "Clocks while active (share of active time with each clocks-event reason)");
    const auto row = [&](const std::string& head, const std::string& key,
                         const ThrottleFigures& t) {
        out += "<tr><td>" + head + "</td>";
        for (std::size_t k = 0; k < k_keys.size(); ++k) {
            out += cell(key + k_keys[k], t.reason_share[k], share_text(t.reason_share[k]));
        }
        out += cell(key + "clock_ratio", t.clock_ratio,
                    t.clock_ratio ? fmt::format("{:.0f}%", *t.clock_ratio * 100.0) : "") +
               "</tr>";
    };
    for (std::size_t i = 0; i < h.gpus.size(); ++i) {
        row(std::to_string(h.gpus[i].index), fmt::format("health.gpus.{}.throttle.", i),
            h.gpus[i].throttle);
    }
    row("all", "health.throttle.", h.throttle);
    out += k_table_close;
}

void memory_and_light(std::string& out, const HealthSection& h) {
    out += table_open({"gpu", "#memory ≥ 90%", "#ghost GiB-hours", "ghost memory seen",
                       "#light card-hours", "#of active", "#cost"},
                      fmt::format("Memory, and busy but light (active while drawing &lt; {}% of "
                                  "the power limit)",
                                  h.light_power_pct));
    for (std::size_t i = 0; i < h.gpus.size(); ++i) {
        const GpuHealthRow& g = h.gpus[i];
        const std::string key = fmt::format("health.gpus.{}.", i);
        const MemoryFigures& mem = g.memory;
        const std::string seen = mem.ghost_first
                                     ? fmt::format("{} → {}", format_iso8601(*mem.ghost_first),
                                                   format_iso8601(*mem.ghost_last_end))
                                     : std::string(mem.ghost_gib_hours ? "never" : "n/a");
        const LightFigures& l = g.light;
        out += fmt::format(
            "<tr><td class=\"n\">{}</td>{}{}<td>{}</td>{}{}{}</tr>", g.index,
            cell(key + "memory.pressure_share", mem.pressure_share, share_text(mem.pressure_share)),
            cell(key + "memory.ghost_gib_hours", mem.ghost_gib_hours,
                 mem.ghost_gib_hours ? format_hours(*mem.ghost_gib_hours) : ""),
            seen,
            cell(key + "busy_but_light.light_gpu_hours",
                 l.share ? std::optional(l.light_hours) : std::nullopt,
                 format_hours(l.light_hours)),
            cell(key + "busy_but_light.share", l.share, share_text(l.share)),
            cell(key + "busy_but_light.cents",
                 l.cost_cents ? std::optional<double>(*l.cost_cents) : std::nullopt,
                 l.cost_cents ? format_money(*l.cost_cents, h.currency) : ""));
    }
    out += k_table_close;
}

void identities(std::string& out, const HealthSection& h) {
    if (h.identities.empty()) {
        return;
    }
    out += table_open({"identity", "#kWh", "#light card-hours", "#of its active"},
                      "By identity (its active + idle-held time, as §4 splits it)");
    for (std::size_t i = 0; i < h.identities.size(); ++i) {
        const IdentityEnergyRow& r = h.identities[i];
        const std::string key = fmt::format("health.identities.{}.", i);
        out += fmt::format(
            "<tr><td>{}</td>{}{}{}</tr>", esc(r.name),
            cell(key + "kwh", r.kwh, r.kwh ? format_hours(*r.kwh) : ""),
            cell(key + "busy_but_light.light_gpu_hours",
                 r.light.share ? std::optional(r.light.light_hours) : std::nullopt,
                 format_hours(r.light.light_hours)),
            cell(key + "busy_but_light.share", r.light.share, share_text(r.light.share)));
    }
    out += k_table_close;
}

} // namespace

void health_section(std::string& out, const ReportModel& m) {
    out += "<section id=\"health\"><h2>§9 Health</h2>\n";
    if (!m.health) {
        out += "<p class=\"muted\">n/a: this source has no health readings.</p></section>\n";
        return;
    }
    const HealthSection& h = *m.health;
    if (h.gpus.empty()) {
        out += "<p class=\"muted\">No GPU cards in the window.</p></section>\n";
        return;
    }
    energy(out, h);
    clocks(out, h);
    memory_and_light(out, h);
    identities(out, h);
    if (!h.findings.empty()) {
        out += "<h3>Findings</h3><ul>";
        for (std::size_t i = 0; i < h.findings.size(); ++i) {
            const HealthFinding& f = h.findings[i];
            out += fmt::format("<li><span class=\"badge\">{}</span> {}</li>", esc(f.id),
                               prose(f.detail));
        }
        out += "</ul><p class=\"small muted\">What to do: §8's health remedies.</p>\n";
    }
    out += "</section>\n";
}

void coverage_section(std::string& out, const ReportModel& m) {
    out += "<section id=\"coverage\"><h2>Data coverage</h2>\n";
    const Coverage& c = m.coverage;
    if (!c.first) {
        out += "<p class=\"muted\">No samples in the window.</p></section>\n";
        return;
    }
    out += fmt::format("<p>First sample {}, last sample ends {}; {} of the window recorded.</p>\n",
                       format_iso8601(*c.first), format_iso8601(*c.last_end),
                       number("coverage.recorded_share", c.covered_share,
                              fmt::format("{:.1f}%", c.covered_share * 100.0)));
    if (c.gaps.empty()) {
        out += "<p>No gaps.</p>\n";
    } else {
        out += fmt::format("<p>{} gap{} without data (daemon not running):</p><ul>", c.gaps.size(),
                           c.gaps.size() == 1 ? "" : "s");
        const std::size_t shown = std::min<std::size_t>(c.gaps.size(), 20);
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& [from, to] = c.gaps[i];
            out += fmt::format("<li>{} → {} ({})</li>", format_iso8601(from), format_iso8601(to),
                               format_duration(to - from));
        }
        if (shown < c.gaps.size()) {
            out += fmt::format("<li>… and {} more</li>", c.gaps.size() - shown);
        }
        out += "</ul>\n";
    }
    const ProvenanceShares& p = m.provenance;
    out += "<ul class=\"small\"><li>Measured: " + esc(source_summary(p)) + "</li>";
    if (const std::string caveat = snapshot_caveat(p); !caveat.empty()) {
        out += "<li>" + esc(caveat) + "</li>";
    }
    if (p.source_unknown > 0) {
        out += "<li>How the rest was measured was not recorded (older recordings or a source "
               "without provenance).</li>";
    }
    if (p.unmeasured_hours > 0) {
        out += fmt::format("<li>Unmeasured {} GPU-hours: {}</li>",
                           number("provenance.unmeasured_gpu_hours", p.unmeasured_hours,
                                  format_hours(p.unmeasured_hours)),
                           esc(unmeasured_reasons(p)));
    }
    if (p.overlap_hours > 0) {
        out += fmt::format(
            "<li>{} of card time was recorded more than once (overlapping runs for "
            "the same GPU) and is counted once.</li>",
            format_duration(std::llround(p.overlap_hours * static_cast<double>(k_us_per_hour))));
    }
    for (const GpuRow& g : m.gpus) {
        if (m.gpus.size() < 2) {
            break;
        }
        out += fmt::format("<li>GPU {} <code>{}</code>: {}{}</li>", g.index, esc(g.short_uuid),
                           esc(source_summary(g.provenance)),
                           g.provenance.unmeasured_hours > 0
                               ? " — " + esc(unmeasured_reasons(g.provenance))
                               : std::string());
    }
    out += "</ul></section>\n";
}

} // namespace gua::report::html

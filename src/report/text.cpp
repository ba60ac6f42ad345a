// SPDX-License-Identifier: Apache-2.0
// The text report, in gpu-usage-audit's section order and shape, with gua's corrected numbers.
#include "audit/waste.hpp"
#include "core/bar.hpp"
#include "core/duration.hpp"
#include "core/printable.hpp"
#include "core/units.hpp"
#include "report/render.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

namespace gua::report {

namespace {

constexpr std::array<const char*, 7> k_weekdays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::string_view k_ramp = " .:-=+*#%@";

struct Style {
    bool color;
    std::string paint(std::string_view code, const std::string& s) const {
        return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
    }
};

void headline(std::string& out, const ReportModel& m, const TextOptions& o, const Style& st) {
    out += "§1 Headline\n";
    if (m.samples == 0) {
        out += "  (no samples in window)\n";
        return;
    }
    const auto& h = m.headline;
    const bool alloc = m.allocation.has_value();
    const auto cells =
        bar_cells(std::array<double, 6>{h.active, h.idle_held, h.allocated_unused, h.truly_idle,
                                        h.unmeasured, h.lost_to_faults},
                  o.width);
    const std::string lost = cells[5] > 0 ? st.paint("31", repeat("×", cells[5])) : "";
    out += "  " + st.paint("32", repeat("█", cells[0])) + st.paint("33", repeat("▒", cells[1])) +
           lost + st.paint("35", repeat("▓", cells[2])) + st.paint("2", repeat("░", cells[3])) +
           repeat("?", cells[4]) + "\n";
    const auto p = state_percentages(m.headline, alloc);
    // With allocations the names need more room: "allocated-unused".
    const int name_width = alloc ? 16 : 12;
    const auto line = [&](const char* name, const char* glyph, double pct, double hours) {
        return fmt::format("  {:<{}} {}  {:5.1f}%  {:>10} GPU-hours", name, name_width, glyph, pct,
                           format_hours(hours));
    };
    out += line("active", "█", p[0], h.active_hours) + "\n";
    out += line("idle-held", "▒", p[1], h.idle_held_hours) + "\n";
    out += fault_loss_headline_text(m, name_width);
    if (alloc) {
        out += line("allocated-unused", "▓", p[4], h.allocated_unused_hours) +
               " (allocated to a job or pod, nobody used it)\n";
    }
    out += line("truly-idle", "░", p[2], h.truly_idle_hours) +
           (alloc ? " (unallocated and unused)\n" : "\n");
    if (m.headline.unmeasured_hours > 0) {
        out += line("unmeasured", "?", p[3], h.unmeasured_hours) + " (why: Data coverage)\n";
    }
    out += fmt::format("  ({} samples; {})\n", m.samples, source_summary(m.provenance));
    if (const std::string caveat = snapshot_caveat(m.provenance); !caveat.empty()) {
        out += "  (" + caveat + ")\n";
    }
}

void waste(std::string& out, const ReportModel& m) {
    out += "§2 Waste\n";
    if (m.samples == 0) {
        out += "  (no samples in window)\n";
        return;
    }
    const audit::Waste& w = m.waste;
    const bool alloc = m.allocation.has_value();
    out += fmt::format("  idle-held   {:>10} GPU-hours   ~{:.2f} GPUs equivalently unused\n",
                       format_hours(w.idle_held_gpu_hours), w.idle_held_equiv_gpus);
    out += fault_loss_waste_text(m);
    if (alloc) {
        out +=
            fmt::format("  allocated-unused {:>5} GPU-hours   ~{:.2f} GPUs equivalently unused\n",
                        format_hours(w.allocated_unused_gpu_hours), w.allocated_unused_equiv_gpus);
    }
    out += fmt::format("  truly-idle  {:>10} GPU-hours   ~{:.2f} GPUs equivalently unused\n",
                       format_hours(w.truly_idle_gpu_hours), w.truly_idle_equiv_gpus);
    const std::string measured =
        std::abs(w.measured_gpus - static_cast<double>(w.cards_in_window)) < 0.005
            ? ""
            : fmt::format(" ({:.2f} of them measured)", w.measured_gpus);
    out += fmt::format("  ({} GPU{} in window{}, {} GPU-hours observed; {} other "
                       "users, truly-idle is free capacity)\n",
                       w.cards_in_window, w.cards_in_window == 1 ? "" : "s", measured,
                       format_hours(m.observed_card_hours),
                       alloc ? "idle-held and allocated-unused block" : "idle-held blocks");
}

void per_gpu(std::string& out, const ReportModel& m) {
    out += "§3 Per-GPU\n";
    if (m.gpus.empty()) {
        out += "  (no GPU cards in window)\n";
        return;
    }
    const bool fleet = !m.hosts.empty();
    const bool alloc = m.allocation.has_value();
    const bool any_unmeasured = std::any_of(
        m.gpus.begin(), m.gpus.end(), [](const GpuRow& g) { return g.shares.unmeasured > 0; });
    out += fmt::format("  {}gpu  uuid          model                      active  idle-held  "
                       "{}truly-idle{}  samples\n",
                       fleet ? fmt::format("{:<21}  ", "host") : "", alloc ? "alloc-unused  " : "",
                       any_unmeasured ? "  unmeasured" : "");
    for (const GpuRow& g : m.gpus) {
        const auto p = state_percentages(g.shares, alloc);
        const bool measured =
            g.shares.active + g.shares.idle_held + g.shares.truly_idle + g.shares.allocated_unused >
            0;
        out += fleet ? fmt::format("  {:<21}", g.host.substr(0, 21)) : "";
        const std::string unmeasured =
            any_unmeasured ? fmt::format("  {:9.1f}%", p[3]) : std::string();
        if (measured) {
            const std::string unused = alloc ? fmt::format("{:11.1f}%  ", p[4]) : std::string();
            out += fmt::format("  {:>3}  {:<12}  {:<25} {:6.1f}%  {:8.1f}%  {}{:9.1f}%{}  {:>7}\n",
                               g.index, g.short_uuid, g.model.substr(0, 25), p[0], p[1], unused,
                               p[2], unmeasured, g.samples);
        } else {
            const std::string unused = alloc ? fmt::format("{:>12}  ", "n/a") : std::string();
            out += fmt::format("  {:>3}  {:<12}  {:<25} {:>7}  {:>9}  {}{:>10}{}  {:>7}\n", g.index,
                               g.short_uuid, g.model.substr(0, 25), "n/a", "n/a", unused, "n/a",
                               unmeasured, g.samples);
        }
    }
    out += fault_loss_gpus_text(m);
}

void per_host(std::string& out, const ReportModel& m) {
    out += "Per host\n";
    const bool alloc = m.allocation.has_value();
    out += fmt::format("  {:<21} {:>5} {:>7}  {:>9}  {}{:>10}  {:>10}  {:>8}\n", "host", "gpus",
                       "active", "idle-held", alloc ? "alloc-unused  " : "", "truly-idle",
                       "GPU-hours", "recorded");
    for (const HostRow& h : m.hosts) {
        const auto p = state_percentages(h.shares, alloc);
        const std::string unused = alloc ? fmt::format("{:11.1f}%  ", p[4]) : std::string();
        out +=
            fmt::format("  {:<21} {:>5} {:6.1f}%  {:8.1f}%  {}{:9.1f}%  {:>10}  {:7.1f}%\n",
                        h.host.substr(0, 21), h.gpus, p[0], p[1], unused, p[2],
                        format_hours(h.shares.active_hours + h.shares.idle_held_hours +
                                     h.shares.allocated_unused_hours + h.shares.truly_idle_hours),
                        h.covered_share * 100.0);
    }
}

void identity_table(std::string& out, const ReportModel& m) {
    out += "§4 Top identities\n";
    if (m.identities.empty()) {
        out += "  (no processes in window)\n";
    } else {
        out += "  identity              gpu-hours   idle-held  idle GiB-hours  samples\n";
        for (const IdentityRow& r : m.identities) {
            out += fmt::format("  {:<20} {:>10}  {:9.1f}%  {:>14}  {:>7}\n", r.name.substr(0, 20),
                               format_hours(r.gpu_hours), r.idle_held_share * 100.0,
                               format_hours(r.idle_held_gib_hours), r.samples);
        }
        if (m.identities_total > m.identities.size()) {
            out += fmt::format("  (top {} of {} identities)\n", m.identities.size(),
                               m.identities_total);
        }
        out += "  (GPU-hours = active + idle-held time split by SM share and held memory; they add "
               "up to the card-hours)\n";
    }
}

void identities(std::string& out, const ReportModel& m) {
    if (m.jobs) {
        render_jobs_text(out, m);
    } else {
        identity_table(out, m);
    }
    if (m.allocation) {
        render_allocation_owners_text(out, *m.allocation);
    }
}
void heatmap(std::string& out, const ReportModel& m) {
    out += fmt::format("§5 Time-of-day heatmap ({}, share of active time)\n", m.time_zone);
    if (m.samples == 0) {
        out += "  (no samples in window)\n";
        return;
    }
    out += "       ";
    for (int h = 0; h < 24; ++h) {
        out += fmt::format(" {}", h % 10);
    }
    out += "\n";
    for (std::size_t d = 0; d < 7; ++d) {
        std::string row = fmt::format("  {}  ", k_weekdays[d]);
        for (std::size_t h = 0; h < 24; ++h) {
            const HeatCell& c = m.heatmap[d][h];
            char glyph = ' ';
            if (c.has_data) {
                const auto level = static_cast<std::size_t>(std::lround(c.active * 9.0));
                glyph = k_ramp[std::max<std::size_t>(1, std::min<std::size_t>(level, 9))];
            }
            row += ' ';
            row += glyph;
        }
        out += row + "\n";
    }
    out += "  (blank: no data; . : - = + * # % @ from least to most active)\n";
}

void efficiency(std::string& out, const ReportModel& m) {
    out += "§6 Efficiency\n";
    if (m.bucket_hours <= 0) {
        out += "  (no utilization measured in window)\n";
        return;
    }
    static constexpr std::array<const char*, 4> k_names{
        "idle           <10%", "underutilized  10-70%", "productive     70-90%",
        "compute-bound  >=90%"};
    const auto p =
        audit::rounded_percentages({m.buckets[0], m.buckets[1], m.buckets[2], m.buckets[3]}, 1);
    for (std::size_t i = 0; i < 4; ++i) {
        out += fmt::format("  {:<22} {:5.1f}%  {}\n", k_names[i], p[i],
                           repeat("■", static_cast<int>(std::lround(p[i] / 5.0))));
    }
    out += fmt::format("  (share of {} measured GPU-hours by SM utilization)\n",
                       format_hours(m.bucket_hours));
}

void verdict(std::string& out, const ReportModel& m) {
    out += "Verdict\n";
    if (m.samples == 0) {
        out += "  (no samples in window)\n";
        return;
    }
    out += verdict_text(m);
}

void coverage(std::string& out, const ReportModel& m) {
    out += "Data coverage\n";
    if (!m.coverage.first) {
        out += "  (no samples in window)\n";
        return;
    }
    out += fmt::format("  first sample {}, last sample ends {}; {:.1f}% of the window recorded\n",
                       format_iso8601(*m.coverage.first), format_iso8601(*m.coverage.last_end),
                       m.coverage.covered_share * 100.0);
    if (m.coverage.gaps.empty()) {
        out += "  no gaps\n";
        render_provenance_text(out, m);
        return;
    }
    out += fmt::format("  {} gap{} without data (daemon not running):\n", m.coverage.gaps.size(),
                       m.coverage.gaps.size() == 1 ? "" : "s");
    const std::size_t shown = std::min<std::size_t>(m.coverage.gaps.size(), 5);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& [from, to] = m.coverage.gaps[i];
        out += fmt::format("    {} → {} ({})\n", format_iso8601(from), format_iso8601(to),
                           format_duration(to - from));
    }
    if (shown < m.coverage.gaps.size()) {
        out += fmt::format("    … and {} more\n", m.coverage.gaps.size() - shown);
    }
    render_provenance_text(out, m);
}

} // namespace

std::string render_text(const ReportModel& m, const TextOptions& o) {
    const Style st{o.color};
    std::string out = fmt::format("gua — {}", m.host.empty() ? "(no data recorded)" : m.host);
    if (m.demo_data) {
        out += " — demo data";
    }
    if (!m.driver_version.empty()) {
        out += fmt::format(" (driver {})", m.driver_version);
    }
    out += fmt::format("  Window: {} → {} ({})", format_iso8601(m.window_from),
                       format_iso8601(m.window_to), m.window_label);
    for (const std::string& f : m.filters) {
        out += "  [" + f + "]";
    }
    out += "\n";
    for (const std::string& n : m.notes) {
        out += "note: " + n + "\n";
    }
    out += "\n";
    headline(out, m, o, st);
    out += "\n";
    waste(out, m);
    out += "\n";
    per_gpu(out, m);
    out += "\n";
    if (!m.hosts.empty()) {
        per_host(out, m);
        out += "\n";
    }
    identities(out, m);
    out += "\n";
    if (m.allocation) {
        render_allocation_text(out, m);
        out += "\n";
    }
    heatmap(out, m);
    out += "\n";
    efficiency(out, m);
    out += "\n";
    render_cost_text(out, m);
    out += "\n";
    render_recommendations_text(out, m);
    out += "\n";
    render_health_text(out, m);
    out += "\n";
    if (m.policy) {
        out += render_policy_text(*m.policy) + "\n";
    }
    verdict(out, m);
    out += "\n";
    coverage(out, m);
    // Names, labels and notes come from other people: no control character reaches a terminal.
    return terminal_text(out, o.color);
}

} // namespace gua::report

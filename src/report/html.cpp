// SPDX-License-Identifier: Apache-2.0
// The HTML report: one self-contained page (inline CSS and SVG, no script, no fetches) in the text
// report's section order; every number comes from the model, marked with its JSON field.
#include "audit/waste.hpp"
#include "core/printable.hpp"
#include "core/time.hpp"
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/html_style.hpp"
#include "report/render.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::report {

namespace html {

std::string esc(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string prose(std::string_view text) {
    const std::string escaped = esc(text);
    if (std::count(escaped.begin(), escaped.end(), '`') < 2) {
        return escaped;
    }
    std::string out;
    bool open = false;
    std::size_t last = escaped.rfind('`');
    for (std::size_t i = 0; i < escaped.size(); ++i) {
        if (escaped[i] != '`' || (!open && i == last)) {
            out += escaped[i];
            continue;
        }
        out += open ? "</code>" : "<code>";
        open = !open;
    }
    return out;
}

std::string field(std::string_view path, double value) {
    return fmt::format(" data-field=\"{}\" data-value=\"{}\"", esc(path), value);
}

std::string number(std::string_view path, double value, std::string_view text) {
    return fmt::format("<span{}>{}</span>", field(path, value), esc(text));
}

std::string table_open(std::initializer_list<std::string_view> columns, std::string_view caption) {
    std::string out = "<div class=\"scroll\"><table>";
    if (!caption.empty()) {
        out += fmt::format("<caption>{}</caption>", caption);
    }
    out += "<thead><tr>";
    for (const std::string_view c : columns) {
        out += c.starts_with('#') ? fmt::format("<th class=\"n\">{}</th>", c.substr(1))
                                  : fmt::format("<th>{}</th>", c);
    }
    return out + "</tr></thead><tbody>";
}

std::string num_td(std::string_view html) {
    return fmt::format("<td class=\"n\">{}</td>", html);
}

} // namespace html

namespace html_page { // not anonymous: text.cpp's section functions share a unity batch

using html::esc;
using html::field;
using html::number;

std::string pct_text(double pct) {
    return fmt::format("{:.1f}%", pct);
}

void header(std::string& out, const ReportModel& m) {
    out += fmt::format("<header><h1>gua — {}", esc(m.host.empty() ? "(no data recorded)" : m.host));
    if (m.demo_data) {
        out += " <span class=\"badge\">demo data</span>";
    }
    out += "</h1>\n<p>";
    if (!m.driver_version.empty()) {
        out += fmt::format("Driver {} · ", esc(m.driver_version));
    }
    out +=
        fmt::format("Window <time>{}</time> → <time>{}</time> ({})", format_iso8601(m.window_from),
                    format_iso8601(m.window_to), esc(m.window_label));
    for (const std::string& f : m.filters) {
        out += fmt::format(" <span class=\"badge\">{}</span>", esc(f));
    }
    out += fmt::format(" · {} samples</p>\n", number("samples", static_cast<double>(m.samples),
                                                     std::to_string(m.samples)));
    if (!m.notes.empty()) {
        out += "<ul class=\"notes\">";
        for (const std::string& n : m.notes) {
            out += "<li>" + html::prose(n) + "</li>";
        }
        out += "</ul>\n";
    }
    out += "<nav aria-label=\"Sections\"><a href=\"#headline\">Headline</a><a "
           "href=\"#gpus\">GPUs</a><a href=\"#identities\">Identities</a><a "
           "href=\"#heatmap\">Heatmap</a><a href=\"#efficiency\">Efficiency</a><a "
           "href=\"#cost\">Cost</a><a href=\"#recommendations\">Recommendations</a><a "
           "href=\"#health\">Health</a><a href=\"#verdict\">Verdict</a><a "
           "href=\"#coverage\">Coverage</a></nav></header>\n";
}

void headline(std::string& out, const ReportModel& m) {
    out += "<section id=\"headline\"><h2>§1 Headline</h2>\n";
    if (m.samples == 0) {
        out += "<p class=\"muted\">No samples in the window.</p></section>\n";
        return;
    }
    out += "<div class=\"kpis\">";
    for (const html::StatePart& k : html::state_parts(m.headline, m.allocation.has_value())) {
        if (std::string_view(k.key) == "unmeasured" && k.hours <= 0) {
            continue;
        }
        out += fmt::format(
            "<div class=\"kpi\"><span class=\"sw {}\"></span>{}<b>{}</b>{} "
            "GPU-hours</div>",
            k.cls, k.name, number(fmt::format("headline.{}", k.key), k.share, pct_text(k.pct)),
            number(fmt::format("headline.{}_gpu_hours", k.key), k.hours, format_hours(k.hours)));
    }
    out += "</div>\n";
    html::headline_chart(out, m);
    out += fmt::format("<p class=\"small muted\">{}", esc(source_summary(m.provenance)));
    if (const std::string caveat = snapshot_caveat(m.provenance); !caveat.empty()) {
        out += " — " + esc(caveat);
    }
    out += "</p></section>\n";
}

void waste(std::string& out, const ReportModel& m) {
    out += "<section id=\"waste\"><h2>§2 Waste</h2>\n";
    if (m.samples == 0) {
        out += "<p class=\"muted\">No samples in the window.</p></section>\n";
        return;
    }
    const audit::Waste& w = m.waste;
    out += html::table_open(
        {"state", "#GPU-hours", "#share of measured time", "#GPUs equivalently unused"});
    const auto row = [&](std::string_view label, std::string_view key, double hours, double share,
                         double equiv) {
        out += fmt::format("<tr><td>{}</td>{}{}{}</tr>", label,
                           html::num_td(number(fmt::format("waste.{}_gpu_hours", key), hours,
                                               format_hours(hours))),
                           html::num_td(number(fmt::format("waste.{}_share", key), share,
                                               pct_text(share * 100.0))),
                           html::num_td(number(fmt::format("waste.{}_equiv_gpus", key), equiv,
                                               fmt::format("~{:.2f}", equiv))));
    };
    row("idle-held (blocks other users)", "idle_held", w.idle_held_gpu_hours, w.idle_held_share,
        w.idle_held_equiv_gpus);
    if (m.allocation) {
        row("allocated-unused (allocated, nobody used it)", "allocated_unused",
            w.allocated_unused_gpu_hours, w.allocated_unused_share, w.allocated_unused_equiv_gpus);
    }
    row("truly idle (free capacity)", "truly_idle", w.truly_idle_gpu_hours, w.truly_idle_share,
        w.truly_idle_equiv_gpus);
    out += html::k_table_close;
    html::fault_loss_paragraph(out, m);
    out += fmt::format(
        "<p class=\"small muted\">{} GPU{} in window ({} measured), {} GPU-hours observed.</p>"
        "</section>\n",
        number("waste.gpus_in_window", static_cast<double>(w.cards_in_window),
               std::to_string(w.cards_in_window)),
        w.cards_in_window == 1 ? "" : "s",
        number("waste.measured_gpus", w.measured_gpus, fmt::format("{:.2f}", w.measured_gpus)),
        number("waste.observed_gpu_hours", m.observed_card_hours,
               format_hours(m.observed_card_hours)));
}

void per_gpu(std::string& out, const ReportModel& m) {
    out += "<section id=\"gpus\"><h2>§3 Per GPU</h2>\n";
    if (m.gpus.empty()) {
        out += "<p class=\"muted\">No GPU cards in the window.</p></section>\n";
        return;
    }
    const bool fleet = !m.hosts.empty();
    const bool alloc = m.allocation.has_value();
    out += fleet ? html::table_open({"host", "gpu", "uuid", "model", "#active", "#idle-held",
                                     "#truly idle", "#unmeasured", "#samples"})
                 : html::table_open({"gpu", "uuid", "model", "#active", "#idle-held", "#truly idle",
                                     "#unmeasured", "#samples"});
    if (alloc) {
        // The allocated-unused column goes after idle-held, as in the other forms.
        const std::string_view held = "<th class=\"n\">idle-held</th>";
        const std::size_t at = out.rfind(held);
        out.insert(at + held.size(), "<th class=\"n\">allocated-unused</th>");
    }
    for (std::size_t i = 0; i < m.gpus.size(); ++i) {
        const GpuRow& g = m.gpus[i];
        const std::vector<html::StatePart> parts = html::state_parts(g.shares, alloc);
        const bool measured =
            g.shares.active + g.shares.idle_held + g.shares.truly_idle + g.shares.allocated_unused >
            0;
        out += "<tr>";
        if (fleet) {
            out += "<td>" + esc(g.host) + "</td>";
        }
        out += fmt::format("<td class=\"n\">{}</td><td><code>{}</code></td><td>{}</td>", g.index,
                           esc(g.short_uuid), esc(g.model));
        for (const html::StatePart& k : parts) {
            const bool unmeasured = std::string_view(k.key) == "unmeasured";
            const std::string text = measured || unmeasured ? pct_text(k.pct) : "n/a";
            out += html::num_td(number(fmt::format("gpus.{}.states.{}", i, k.key), k.share, text));
        }
        out += html::num_td(number(fmt::format("gpus.{}.samples", i),
                                   static_cast<double>(g.samples), std::to_string(g.samples))) +
               "</tr>";
    }
    out += html::k_table_close;
    html::timelines(out, m);
    out += "</section>\n";
}

void per_host(std::string& out, const ReportModel& m) {
    if (m.hosts.empty()) {
        return;
    }
    const bool alloc = m.allocation.has_value();
    out += "<section id=\"hosts\"><h2>Per host</h2>" +
           html::table_open({"host", "#gpus", "#active", "#idle-held", "#truly idle", "#recorded"});
    if (alloc) {
        const std::string_view held = "<th class=\"n\">idle-held</th>";
        out.insert(out.rfind(held) + held.size(), "<th class=\"n\">allocated-unused</th>");
    }
    for (std::size_t i = 0; i < m.hosts.size(); ++i) {
        const HostRow& h = m.hosts[i];
        out += fmt::format("<tr><td>{}</td>{}", esc(h.host), html::num_td(std::to_string(h.gpus)));
        for (const html::StatePart& k : html::state_parts(h.shares, alloc)) {
            if (std::string_view(k.key) != "unmeasured") {
                out += html::num_td(
                    number(fmt::format("hosts.{}.states.{}", i, k.key), k.share, pct_text(k.pct)));
            }
        }
        out += html::num_td(number(fmt::format("hosts.{}.recorded_share", i), h.covered_share,
                                   pct_text(h.covered_share * 100.0))) +
               "</tr>";
    }
    out += "</tbody></table></div></section>\n";
}

void verdict(std::string& out, const ReportModel& m) {
    out += "<section id=\"verdict\"><h2>Verdict</h2>\n";
    if (m.samples == 0) {
        out += "<p class=\"muted\">No samples in the window.</p></section>\n";
        return;
    }
    const audit::Waste& w = m.waste;
    std::string text = verdict_text(m);
    while (!text.empty() && (text.front() == ' ' || text.back() == '\n')) {
        text.erase(text.front() == ' ' ? text.begin() : text.end() - 1);
    }
    const char* cls = !w.verdict_certain ? "verdict open"
                      : w.policy_problem ? "verdict bad"
                                         : "verdict";
    const std::string low = pct_text(w.idle_held_share_low * 100.0);
    const std::string high = pct_text(w.idle_held_share_high * 100.0);
    const std::string range =
        low == high
            ? std::string()
            : fmt::format(
                  " (between {} and {} of recorded time, given unmeasured time and "
                  "snapshots)",
                  number("policy_verdict.idle_held_share_low", w.idle_held_share_low, low),
                  number("policy_verdict.idle_held_share_high", w.idle_held_share_high, high));
    out += fmt::format("<div class=\"{}\"><p>{}</p><p class=\"small muted\">Idle-held share of "
                       "measured time {}{}; limit {}.</p></div></section>\n",
                       cls, html::prose(text),
                       number("policy_verdict.idle_held_share", w.idle_held_share,
                              pct_text(w.idle_held_share * 100.0)),
                       range,
                       number("policy_verdict.limit", audit::k_idle_held_policy_share,
                              pct_text(audit::k_idle_held_policy_share * 100.0)));
}

} // namespace html_page

std::string render_html(const ReportModel& m) {
    using namespace html_page;
    std::string out;
    out.reserve(256 * 1024);
    const std::string title = fmt::format(
        "gua report — {} — {}", m.host.empty() ? "(no data recorded)" : m.host, m.window_label);
    out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta "
           "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta "
           "name=\"color-scheme\" content=\"light dark\">\n<meta name=\"generator\" "
           "content=\"gua " +
           esc(m.gua_version) + "\">\n<title>" + esc(title) + "</title>\n<style>";
    out += html::k_style;
    if (m.allocation) {
        out += html::k_allocation_style;
    }
    out += "</style></head>\n<body>\n";
    header(out, m);
    out += "<main>\n";
    headline(out, m);
    waste(out, m);
    per_gpu(out, m);
    per_host(out, m);
    html::top_section(out, m);
    if (m.allocation) {
        html::allocations_section(out, m);
    }
    html::heatmap_chart(out, m);
    html::efficiency_chart(out, m);
    html::cost_section(out, m);
    html::recommendations_section(out, m);
    html::health_section(out, m);
    if (m.policy) {
        out += "<section id=\"policy\"><h2>Policy</h2><pre>" + esc(render_policy_text(*m.policy)) +
               "</pre></section>\n";
    }
    verdict(out, m);
    html::coverage_section(out, m);
    out += fmt::format("</main>\n<footer>gua {} · report schema {} · the same figures as "
                       "<code>gua report --format json</code>; thresholds: active at SM "
                       "utilization ≥ {}%, held above {} MiB.</footer>\n</body></html>\n",
                       esc(m.gua_version), m.schema_version, m.active_threshold_pct,
                       m.held_threshold_mib);
    // Names and labels come from other people: valid UTF-8, no control characters.
    return html_text(out);
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The HTML report's charts as inline SVG, each with a <title>/<desc> or a table beside it as its
// text alternative: headline bar, per-card timelines, heatmap, identity bars, efficiency.
#include "audit/waste.hpp"
#include "core/duration.hpp"
#include "core/time.hpp"
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace gua::report::html {

namespace {

constexpr std::array<const char*, 7> k_weekdays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

/// "2026-05-04 06:00" (UTC).
std::string minute_text(TimeUs t) {
    const std::string iso = format_iso8601(t);
    return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

/// "2026-05-04 06:00 → 12:00", or with the end's date when it is another day; "2026-05-04" for
/// one whole UTC day.
std::string span_text(TimeUs from, TimeUs to) {
    if (from % k_us_per_day == 0 && to - from == k_us_per_day) {
        return format_iso8601(from).substr(0, 10);
    }
    const std::string a = minute_text(from);
    const std::string b = minute_text(to);
    return a + " → " + (a.substr(0, 10) == b.substr(0, 10) ? b.substr(11) : b);
}

std::string pct_text(double pct) {
    return fmt::format("{:.1f}%", pct);
}

} // namespace

std::vector<StatePart> state_parts(const StateShares& s, bool alloc) {
    const std::vector<double> p = state_percentages(s, alloc);
    std::vector<StatePart> parts{
        {"active", "a", "active", s.active, p[0], s.active_hours},
        {"idle-held", "h", "idle_held", s.idle_held, p[1], s.idle_held_hours}};
    if (alloc) {
        parts.push_back({"allocated-unused", "x", "allocated_unused", s.allocated_unused, p[4],
                         s.allocated_unused_hours});
    }
    parts.push_back({"truly idle", "t", "truly_idle", s.truly_idle, p[2], s.truly_idle_hours});
    parts.push_back({"unmeasured", "u", "unmeasured", s.unmeasured, p[3], s.unmeasured_hours});
    return parts;
}

void headline_chart(std::string& out, const ReportModel& m) {
    const std::vector<StatePart> parts = state_parts(m.headline, m.allocation.has_value());
    std::string desc;
    for (const StatePart& k : parts) {
        if (k.share > 0) {
            desc += fmt::format("{}{} {}", desc.empty() ? "" : ", ", k.name, pct_text(k.pct));
        }
    }
    out += fmt::format("<figure><svg class=\"bar\" viewBox=\"0 0 1000 30\" "
                       "preserveAspectRatio=\"none\" role=\"img\" aria-labelledby=\"hb-t hb-d\">"
                       "<title id=\"hb-t\">Recorded GPU time by state</title><desc "
                       "id=\"hb-d\">{}</desc>",
                       esc(desc));
    double x = 0;
    for (const StatePart& k : parts) {
        if (k.share <= 0) {
            continue;
        }
        const double w = k.share * 1000.0;
        out += fmt::format("<rect class=\"{}\" x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" "
                           "height=\"30\"><title>{}: {} ({} GPU-hours)</title></rect>",
                           k.cls, x, w, k.name, pct_text(k.pct), format_hours(k.hours));
        x += w;
    }
    out += "</svg></figure>\n";
}

namespace {

constexpr double k_timeline_width = 1000;
constexpr double k_timeline_height = 34;

/// Draws span `s` into `paths` (one per state part: a bar from the baseline up) and
/// `hover` (a transparent rectangle carrying its <title>).
void span_bars(std::vector<std::string>& paths, std::string& hover, const TimelineSpan& s,
               const ReportModel& m, bool alloc) {
    const double window = static_cast<double>(std::max<TimeUs>(m.window_to - m.window_from, 1));
    const double x = static_cast<double>(s.from - m.window_from) / window * k_timeline_width;
    const double w = static_cast<double>(s.to - s.from) / window * k_timeline_width;
    const double span_hours = to_hours(std::max<TimeUs>(s.to - s.from, 1));
    StateShares span;
    span.active_hours = s.active_hours;
    span.idle_held_hours = s.idle_held_hours;
    span.allocated_unused_hours = s.allocated_unused_hours;
    span.truly_idle_hours = s.truly_idle_hours;
    span.unmeasured_hours = s.unmeasured_hours;
    const std::vector<StatePart> parts = state_parts(span, alloc);
    std::string title;
    double y = k_timeline_height;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const double hours = parts[k].hours;
        if (hours <= 0) {
            continue;
        }
        title += fmt::format(", {} {} h", parts[k].name, format_hours(hours));
        const double h = std::min(hours / span_hours * k_timeline_height, y);
        if (h >= 0.05) {
            fmt::format_to(std::back_inserter(paths[k]), "M{:.2f} {:.1f}v-{:.1f}h{:.2f}v{:.1f}z", x,
                           y, h, w, h);
        }
        y -= h;
    }
    fmt::format_to(std::back_inserter(hover),
                   "<rect x=\"{:.2f}\" width=\"{:.2f}\" height=\"34\"><title>{}:{}</title></rect>",
                   x, w, span_text(s.from, s.to), title.substr(1));
}

/// One card's timeline. One path per state, then one transparent rectangle per span carrying
/// its <title>: a fifth of the bytes of a rectangle each.
void timeline_row(std::string& out, const ReportModel& m, const GpuTimeline& g,
                  const std::vector<StatePart>& legend, bool alloc) {
    const auto row = std::find_if(m.gpus.begin(), m.gpus.end(),
                                  [&](const GpuRow& r) { return r.index == g.index; });
    const std::string name =
        row == m.gpus.end() ? fmt::format("GPU {}", g.index)
                            : fmt::format("GPU {} · {} · {}", g.index, row->short_uuid, row->model);
    out += fmt::format("<div class=\"tl\"><h3>{}</h3><svg viewBox=\"0 0 1000 34\" "
                       "preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}: state "
                       "over the window, {} stretches with data\">",
                       esc(name), esc(name), g.spans.size());
    std::vector<std::string> paths(legend.size());
    std::string hover;
    for (const TimelineSpan& s : g.spans) {
        span_bars(paths, hover, s, m, alloc);
    }
    for (std::size_t k = 0; k < paths.size(); ++k) {
        if (!paths[k].empty()) {
            out += fmt::format("<path class=\"{}\" d=\"{}\"/>", legend[k].cls, paths[k]);
        }
    }
    out += "<g class=\"hover\">" + hover + "</g>";
    out += "</svg></div>\n";
}

/// The time axis, in HTML so that its text keeps its size on any width.
void timeline_axis(std::string& out, const ReportModel& m) {
    const double window = static_cast<double>(std::max<TimeUs>(m.window_to - m.window_from, 1));
    const bool days = m.window_to - m.window_from > 2 * k_us_per_day;
    const bool short_window = m.window_to - m.window_from <= 2 * k_us_per_hour;
    out += "<div class=\"axis\" aria-hidden=\"true\">";
    for (int i = 0; i <= 4; ++i) {
        const TimeUs t = m.window_from + static_cast<TimeUs>(window * i / 4.0);
        const std::string label = days           ? format_iso8601(t).substr(0, 10)
                                  : short_window ? format_iso8601(t).substr(11, 8)
                                                 : minute_text(t);
        out += fmt::format("<span style=\"left:{}%\">{}</span>", i * 25, label);
    }
    out += "</div>\n";
}

} // namespace

void timelines(std::string& out, const ReportModel& m) {
    out += "<h3>State over time (UTC)</h3>\n";
    if (m.timeline.bucket_us <= 0) {
        out += "<p class=\"muted\">No timeline: this source has no per-card time.</p>\n";
        return;
    }
    const bool alloc = m.allocation.has_value();
    const std::vector<StatePart> legend = state_parts(StateShares{}, alloc);
    out += "<div class=\"legend\">";
    for (const StatePart& k : legend) {
        out += fmt::format("<span><span class=\"sw {}\"></span>{}</span>", k.cls, k.name);
    }
    out += fmt::format("<span><span class=\"sw k\"></span>no data</span><span class=\"muted\">"
                       "bar height: share of the time; one bar per {} (a rollup's hour or day "
                       "where the data is coarser)</span></div>\n",
                       esc(format_duration(m.timeline.bucket_us)));
    for (const GpuTimeline& g : m.timeline.gpus) {
        timeline_row(out, m, g, legend, alloc);
    }
    timeline_axis(out, m);
}

void heatmap_chart(std::string& out, const ReportModel& m) {
    out += fmt::format("<section id=\"heatmap\"><h2>§5 Time of day ({}, share of active "
                       "time)</h2>\n",
                       esc(m.time_zone));
    if (m.samples == 0) {
        out += "<p class=\"muted\">No samples in the window.</p></section>\n";
        return;
    }
    constexpr int k_left = 40;
    constexpr int k_top = 18;
    constexpr int k_cell_w = 28;
    constexpr int k_cell_h = 22;
    out += fmt::format("<figure><svg class=\"heat\" viewBox=\"0 0 {} {}\" role=\"img\" "
                       "aria-labelledby=\"hm-t "
                       "hm-d\"><title id=\"hm-t\">Active share by weekday and hour ({})</title>"
                       "<desc id=\"hm-d\">Each cell's title gives its active, idle-held and "
                       "truly idle shares and GPU-hours; cells without data are left "
                       "blank.</desc>",
                       k_left + 24 * k_cell_w, k_top + 7 * k_cell_h, esc(m.time_zone));
    for (int h = 0; h < 24; h += 2) {
        out += fmt::format("<text x=\"{}\" y=\"13\" text-anchor=\"middle\">{:02}</text>",
                           k_left + h * k_cell_w + k_cell_w / 2, h);
    }
    std::size_t index = 0; // the cell's place in the JSON report's list of cells with data
    for (std::size_t d = 0; d < 7; ++d) {
        const int y = k_top + static_cast<int>(d) * k_cell_h;
        out += fmt::format("<text x=\"0\" y=\"{}\">{}</text>", y + 15, k_weekdays[d]);
        for (std::size_t h = 0; h < 24; ++h) {
            const HeatCell& c = m.heatmap[d][h];
            const int x = k_left + static_cast<int>(h) * k_cell_w;
            if (!c.has_data) {
                out += fmt::format("<rect class=\"nd\" x=\"{}\" y=\"{}\" width=\"{}\" "
                                   "height=\"{}\"><title>{} {:02}:00: no data</title></rect>",
                                   x + 1, y + 1, k_cell_w - 2, k_cell_h - 2, k_weekdays[d], h);
                continue;
            }
            const int q = std::clamp(static_cast<int>(std::floor(c.active * 10.0)), 0, 9);
            out += fmt::format(
                "<rect class=\"q{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{} "
                "data-weekday=\"{}\" data-hour=\"{}\"><title>{} {:02}:00: active {}, idle-held "
                "{}, {}truly idle {} of {} GPU-hours</title></rect>",
                q, x + 1, y + 1, k_cell_w - 2, k_cell_h - 2,
                field(fmt::format("heatmap.cells.{}.active", index), c.active), d, h, k_weekdays[d],
                h, pct_text(c.active * 100.0), pct_text(c.idle_held * 100.0),
                m.allocation
                    ? fmt::format("allocated-unused {}, ", pct_text(c.allocated_unused * 100.0))
                    : std::string(),
                pct_text(c.truly_idle * 100.0), format_hours(c.card_hours));
            ++index;
        }
    }
    out += "</svg></figure>\n<div class=\"scale\" aria-hidden=\"true\"><span>active "
           "0%&nbsp;</span>";
    for (int q = 0; q < 10; ++q) {
        out += fmt::format("<i class=\"q{}\" title=\"{}–{}%\"></i>", q, q * 10, q * 10 + 10);
    }
    out += "<span>&nbsp;100%</span><span>&nbsp;&nbsp;</span><i class=\"nd\"></i><span>&nbsp;no "
           "data</span></div></section>\n";
}

void identities_chart(std::string& out, const ReportModel& m) {
    out += "<section id=\"identities\"><h2>§4 Top identities</h2>\n";
    if (m.identities.empty()) {
        out += "<p class=\"muted\">No processes in the window.</p></section>\n";
        return;
    }
    double most = 0;
    for (const IdentityRow& r : m.identities) {
        most = std::max(most, r.gpu_hours);
    }
    const std::string& cur = m.cost.currency;
    out += "<div class=\"legend\"><span><span class=\"sw a\"></span>active</span><span><span "
           "class=\"sw h\"></span>idle-held</span></div>\n";
    out += table_open({"identity", "GPU-hours", "#total", "#active", "#idle-held",
                       "#idle-held share", "#idle GiB-hours", "#cost", "#of it idle-held"});
    for (std::size_t i = 0; i < m.identities.size(); ++i) {
        const IdentityRow& r = m.identities[i];
        const std::string key = fmt::format("identities.top.{}.", i);
        const double wa = most > 0 ? r.active_hours / most * 200.0 : 0;
        const double wh = most > 0 ? r.idle_held_hours / most * 200.0 : 0;
        out += fmt::format(
            "<tr><td>{}</td><td><svg class=\"ib\" viewBox=\"0 0 200 14\" width=\"200\" "
            "height=\"14\" "
            "role=\"img\" aria-label=\"{}: {} active, {} idle-held GPU-hours\"><rect class=\"a\" "
            "x=\"0\" y=\"1\" width=\"{:.2f}\" height=\"12\"/><rect class=\"h\" x=\"{:.2f}\" "
            "y=\"1\" width=\"{:.2f}\" height=\"12\"/></svg></td>",
            esc(r.name), esc(r.name), format_hours(r.active_hours), format_hours(r.idle_held_hours),
            wa, wa, wh);
        out +=
            num_td(number(key + "gpu_hours", r.gpu_hours, format_hours(r.gpu_hours))) +
            num_td(number(key + "active_gpu_hours", r.active_hours, format_hours(r.active_hours))) +
            num_td(number(key + "idle_held_gpu_hours", r.idle_held_hours,
                          format_hours(r.idle_held_hours))) +
            num_td(number(key + "idle_held_share", r.idle_held_share,
                          pct_text(r.idle_held_share * 100.0))) +
            num_td(number(key + "idle_held_gib_hours", r.idle_held_gib_hours,
                          format_hours(r.idle_held_gib_hours)));
        const bool priced = i < m.cost.identities.size() && m.cost.identities[i].name == r.name;
        if (priced) {
            const IdentityCostRow& c = m.cost.identities[i];
            const std::int64_t total = c.active_cents + c.idle_held_cents;
            out += num_td(number(fmt::format("cost.identities.{}.total_cents", i),
                                 static_cast<double>(total), format_money(total, cur))) +
                   num_td(number(fmt::format("cost.identities.{}.idle_held_cents", i),
                                 static_cast<double>(c.idle_held_cents),
                                 format_money(c.idle_held_cents, cur))) +
                   "</tr>";
        } else {
            out += num_td("n/a") + num_td("n/a") + "</tr>";
        }
    }
    out += k_table_close;
    out += "<p class=\"small muted\">";
    if (m.identities_total > m.identities.size()) {
        out += fmt::format("Top {} of {} identities. ", m.identities.size(),
                           number("identities.total", static_cast<double>(m.identities_total),
                                  std::to_string(m.identities_total)));
    }
    out += "GPU-hours are active + idle-held time split by SM share and held memory; they add up "
           "to the card-hours.</p></section>\n";
}

void efficiency_chart(std::string& out, const ReportModel& m) {
    out += "<section id=\"efficiency\"><h2>§6 Efficiency</h2>\n";
    if (m.bucket_hours <= 0) {
        out += "<p class=\"muted\">No utilization measured in the window.</p></section>\n";
        return;
    }
    static constexpr std::array<const char*, 4> k_names{
        "idle (&lt;10%)", "underutilized (10–70%)", "productive (70–90%)", "compute-bound (≥90%)"};
    static constexpr std::array<const char*, 4> k_keys{"idle", "underutilized", "productive",
                                                       "compute_bound"};
    static constexpr std::array<const char*, 4> k_classes{"t", "q4", "q7", "q9"};
    const auto p =
        audit::rounded_percentages({m.buckets[0], m.buckets[1], m.buckets[2], m.buckets[3]}, 1);
    out += table_open({"SM utilization", "share of measured time", "#"});
    for (std::size_t k = 0; k < 4; ++k) {
        out += fmt::format(
            "<tr><td>{}</td><td><svg viewBox=\"0 0 300 14\" width=\"300\" height=\"14\" "
            "aria-hidden=\"true\"><rect class=\"k\" x=\"0\" y=\"1\" width=\"300\" "
            "height=\"12\"/><rect class=\"{}\" x=\"0\" y=\"1\" width=\"{:.2f}\" "
            "height=\"12\"/></svg></td><td class=\"n\">{}</td></tr>",
            k_names[k], k_classes[k], m.buckets[k] * 300.0,
            number(fmt::format("efficiency.{}", k_keys[k]), m.buckets[k], pct_text(p[k])));
    }
    out += fmt::format(
        "</tbody></table></div><p class=\"small muted\">Share of {} measured "
        "GPU-hours by SM utilization.</p></section>\n",
        number("efficiency.measured_gpu_hours", m.bucket_hours, format_hours(m.bucket_hours)));
}

} // namespace gua::report::html

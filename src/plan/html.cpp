// SPDX-License-Identifier: Apache-2.0
// The plan as one self-contained HTML page: the sensitivity chart (GPUs needed against the idle
// timeout, one line per sharing mode, the drop–relaunch band shaded), the table and confidence.
#include "core/printable.hpp"
#include "core/time.hpp"
#include "plan/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::plan {

namespace {

constexpr int k_width = 640;
constexpr int k_height = 280;
constexpr int k_margin = 48;

const char* colour_of(Share s) {
    switch (s) {
    case Share::mig:
        return "#d95f02";
    case Share::mps:
        return "#7570b3";
    case Share::exclusive:
        break;
    }
    return "#1b9e77";
}

std::string chart(const PlanResult& plan) {
    std::vector<std::string> labels;
    std::map<Share, std::vector<const Scenario*>> lines;
    int top = 1;
    for (const Scenario& s : plan.scenarios) {
        const std::string t = timeout_label(s.idle_timeout);
        if (std::find(labels.begin(), labels.end(), t) == labels.end()) {
            labels.push_back(t);
        }
        lines[s.share].push_back(&s);
        top = std::max({top, s.relaunch.gpus_needed, s.drop.gpus_needed});
    }
    const auto x = [&](std::size_t i) {
        const double step =
            labels.size() > 1 ? (k_width - 2.0 * k_margin) / static_cast<double>(labels.size() - 1)
                              : 0.0;
        return k_margin + step * static_cast<double>(i);
    };
    const auto y = [&](int v) {
        return k_height - k_margin - (k_height - 2.0 * k_margin) * v / static_cast<double>(top);
    };
    std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                                  "role=\"img\" aria-label=\"GPUs needed by idle timeout\">\n",
                                  k_width, k_height, k_width, k_height);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x(i),
                           k_height - k_margin + 18, html_text(labels[i]));
    }
    svg += fmt::format("<text x=\"8\" y=\"{:.1f}\">{}</text><text x=\"8\" y=\"{:.1f}\">0</text>\n",
                       y(top) + 4, top, y(0) + 4);
    for (const auto& [share, points] : lines) {
        std::string band;
        std::string line;
        for (std::size_t i = 0; i < points.size(); ++i) {
            band += fmt::format("{:.1f},{:.1f} ", x(i), y(points[i]->relaunch.gpus_needed));
            line += fmt::format("{:.1f},{:.1f} ", x(i), y(points[i]->relaunch.gpus_needed));
        }
        for (std::size_t i = points.size(); i-- > 0;) {
            band += fmt::format("{:.1f},{:.1f} ", x(i), y(points[i]->drop.gpus_needed));
        }
        svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.2\"/>\n"
                           "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" "
                           "stroke-width=\"2\"><title>{}</title></polyline>\n",
                           band, colour_of(share), line, colour_of(share), to_string(share));
    }
    return svg + "</svg>\n";
}

std::string html_table(const PlanResult& plan) {
    std::string out = "<table>\n<tr><th>idle timeout</th><th>sharing</th><th>GPUs needed "
                      "(drop–relaunch)</th><th>peak / p99 / p95 in use</th><th>p95 wait "
                      "interactive / batch (s)</th><th>GPUs released</th></tr>\n";
    const auto secs = [](const std::optional<DurationUs>& us) {
        return us ? fmt::format("{:.0f}", static_cast<double>(*us) / 1e6) : std::string("-");
    };
    for (const Scenario& s : plan.scenarios) {
        out += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}–{}{}</td><td>{} / {} / {}</td><td>{} / {}</td>"
            "<td>{} of {}</td></tr>\n",
            timeout_label(s.idle_timeout), to_string(s.share), s.drop.gpus_needed,
            s.relaunch.gpus_needed, s.relaunch.met ? "" : " (objective not met)",
            s.relaunch.concurrency.peak, s.relaunch.concurrency.p99, s.relaunch.concurrency.p95,
            secs(s.relaunch.interactive.p95_us), secs(s.relaunch.batch.p95_us),
            s.savings.gpus_released, s.savings.gpus_recorded);
    }
    return out + "</table>\n";
}

} // namespace

std::string plan_html(const PlanResult& plan) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<title>gua plan</title><style>body{font-family:sans-serif;margin:2em}"
                      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:"
                      "2px 8px}svg text{font-size:12px}</style></head><body>\n";
    out += fmt::format("<h1>gua plan</h1>\n<p>{} to {}</p>\n", format_iso8601(plan.from),
                       format_iso8601(plan.to));
    for (const Pool& p : plan.pools) {
        out += fmt::format("<p>Recorded: {} × {}</p>\n", p.gpus, html_text(p.model));
    }
    out += "<h2>GPUs needed by idle timeout</h2>\n<p>";
    for (Share s : {Share::exclusive, Share::mig, Share::mps}) {
        out += fmt::format("<span style=\"color:{}\">■ {}</span> ", colour_of(s), to_string(s));
    }
    out += "(line: relaunch; shaded down to drop)</p>\n" + chart(plan) + html_table(plan);
    out += "<h2>Confidence</h2>\n<ul>\n";
    for (const std::string& line : confidence_lines(plan)) {
        out += "<li>" + html_text(line) + "</li>\n";
    }
    return out + "</ul>\n</body></html>\n";
}

} // namespace gua::plan

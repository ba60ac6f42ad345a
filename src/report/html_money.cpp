// SPDX-License-Identifier: Apache-2.0
// §7 Cost and §8 Recommendations as HTML: formatting only, every number comes from the model.
#include "audit/waste.hpp"
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report::html {

namespace {

std::string money(std::string_view path, std::int64_t cents, const std::string& cur) {
    return number(path, static_cast<double>(cents), format_money(cents, cur));
}

/// The money cells of a state cost (active, idle-held, allocated-unused when `alloc`, truly
/// idle, total).
std::string cost_cells(const std::string& key, const audit::StateCost& c, const std::string& cur,
                       bool alloc) {
    return num_td(money(key + "active_cents", c.active_cents, cur)) +
           num_td(money(key + "idle_held_cents", c.idle_held_cents, cur)) +
           (alloc ? num_td(money(key + "allocated_unused_cents", c.allocated_unused_cents, cur))
                  : std::string()) +
           num_td(money(key + "truly_idle_cents", c.truly_idle_cents, cur)) +
           num_td(money(key + "total_cents", c.total_cents(), cur));
}

void recommendation(std::string& out, std::size_t i, const audit::Recommendation& r,
                    const std::string& cur) {
    const std::string key = fmt::format("recommendations.items.{}.", i);
    out += fmt::format("<article class=\"rec\"><h3>{}. {} <span class=\"badge\">{}</span></h3>",
                       i + 1, esc(r.title), esc(r.id));
    out += "<ul>";
    for (const std::string& e : r.evidence) {
        out += "<li>" + prose(e) + "</li>";
    }
    out += fmt::format(
        "</ul><p><b>Do:</b> {}</p><p class=\"worth\">Addresses {} GPU-hours ({}) "
        "of the waste baseline; wins back ~{:.0f}% of it → f = {}",
        prose(r.remedy),
        number(key + "addressed_gpu_hours", r.addressed_gpu_hours,
               format_hours(r.addressed_gpu_hours)),
        money(key + "addressed_cents", r.addressed_cents, cur), r.recovery * 100.0,
        number(key + "savings_fraction", r.fraction, fmt::format("{:.3f}", r.fraction)));
    if (r.rate_reduction > 0) {
        out += fmt::format("; spot/preemptible rate cut s = {}",
                           number(key + "rate_reduction", r.rate_reduction,
                                  fmt::format("{:.3f}", r.rate_reduction)));
    }
    out += ".</p></article>\n";
}

void health_remedy(std::string& out, std::size_t i, const HealthRemedy& r, const std::string& cur) {
    const std::string key = fmt::format("recommendations.health.{}.", i);
    out += fmt::format("<article class=\"rec\"><h3>H{}. {} <span class=\"badge\">{}</span></h3>",
                       i + 1, esc(r.title), esc(r.id));
    out += "<ul>";
    for (const std::string& e : r.evidence) {
        out += "<li>" + prose(e) + "</li>";
    }
    out += fmt::format("</ul><p><b>Do:</b> {}</p><p class=\"worth\">", prose(r.remedy));
    if (r.addressed_gpu_hours) {
        out += "Concerns " +
               number(key + "addressed_gpu_hours", *r.addressed_gpu_hours,
                      format_hours(*r.addressed_gpu_hours)) +
               " GPU-hours";
        if (r.addressed_cents) {
            out += " (" + money(key + "addressed_cents", *r.addressed_cents, cur) + ")";
        }
    }
    if (r.at_most_gpu_hours) {
        out += "; wins back at most " +
               number(key + "at_most_gpu_hours", *r.at_most_gpu_hours,
                      format_hours(*r.at_most_gpu_hours)) +
               " GPU-hours";
        if (r.at_most_cents) {
            out += " (" + money(key + "at_most_cents", *r.at_most_cents, cur) + ")";
        }
    }
    out += (r.addressed_gpu_hours ? " — " : "") + prose(r.basis) + "</p></article>\n";
}

/// The row of each state's share of the spend (and their sum).
void spend_share_row(std::string& out, const audit::StateCost& t, bool alloc) {
    const auto p = spend_percentages(t, alloc);
    out += "<tr><td colspan=\"3\" class=\"muted\">share of spend</td>";
    const std::vector<double> shown =
        alloc ? std::vector<double>{p[0], p[1], p[3], p[2], p[0] + p[1] + p[2] + p[3]}
              : std::vector<double>{p[0], p[1], p[2], p[0] + p[1] + p[2]};
    for (const double share : shown) {
        out += num_td(fmt::format("{:.1f}%", share));
    }
    out += "</tr>";
}

/// The cost by identity, when the report has any.
void identity_cost_table(std::string& out, const CostSection& c) {
    const std::string& cur = c.currency;
    if (!c.identities.empty()) {
        out += table_open({"identity", "#active", "#idle-held", "#total"},
                          "By identity (its attributed time, priced per card)");
        for (std::size_t i = 0; i < c.identities.size(); ++i) {
            const IdentityCostRow& r = c.identities[i];
            const std::string key = fmt::format("cost.identities.{}.", i);
            out += fmt::format(
                "<tr><td>{}</td>{}{}{}</tr>", esc(r.name),
                num_td(money(key + "active_cents", r.active_cents, cur)),
                num_td(money(key + "idle_held_cents", r.idle_held_cents, cur)),
                num_td(money(key + "total_cents", r.active_cents + r.idle_held_cents, cur)));
        }
        out += k_table_close;
    }
}

} // namespace

void cost_section(std::string& out, const ReportModel& m) {
    const CostSection& c = m.cost;
    const std::string& cur = c.currency;
    const char* source = c.price_overridden    ? "--price for every GPU"
                         : c.prices_configured ? "prices from gua.toml"
                                               : "built-in example prices; set [pricing] in "
                                                 "gua.toml";
    out += fmt::format("<section id=\"cost\"><h2>§7 Cost</h2>\n<p class=\"small muted\">{}; {}; "
                       "spot discount {:.0f}%.</p>\n",
                       esc(cur), source, c.spot_discount * 100.0);
    if (c.gpus.empty()) {
        out += "<p class=\"muted\">No GPU cards in the window.</p></section>\n";
        return;
    }
    const bool alloc = m.allocation.has_value();
    out += table_open(
        {"gpu", "model", "#per GPU-hour", "#active", "#idle-held", "#truly idle", "#total"});
    if (alloc) {
        const std::string_view held = "<th class=\"n\">idle-held</th>";
        out.insert(out.rfind(held) + held.size(), "<th class=\"n\">allocated-unused</th>");
    }
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
        const GpuCostRow& g = c.gpus[i];
        const std::string key = fmt::format("cost.gpus.{}.", i);
        out += fmt::format("<tr>{}<td>{}{}</td>{}{}</tr>", num_td(std::to_string(g.index)),
                           esc(g.model),
                           g.price_rule.empty()
                               ? ""
                               : " <span class=\"small muted\">(" + esc(g.price_rule) + ")</span>",
                           num_td(number(key + "price_per_gpu_hour",
                                         static_cast<double>(g.micros_per_gpu_hour) /
                                             static_cast<double>(audit::k_micros_per_unit),
                                         format_micros(g.micros_per_gpu_hour, cur))),
                           cost_cells(key, g.cost, cur, alloc));
    }
    const audit::StateCost& t = c.total;
    out += fmt::format("<tr class=\"sum\"><td colspan=\"3\">all</td>{}</tr>",
                       cost_cells("cost.total.", t, cur, alloc));
    spend_share_row(out, t, alloc);
    out += k_table_close;
    identity_cost_table(out, c);
    const audit::RunRate& w = c.waste_rate;
    out += fmt::format(
        "<div class=\"kpis\"><div class=\"kpi\">Waste run-rate<b>{}/month</b>{}/hour · {}/year"
        "</div></div>\n<p class=\"small muted\">Idle-held {}/hour + truly idle {}/hour at this "
        "window's per-card rates (× 720 h a month, × 8760 h a year); rows are rounded to the cent "
        "on their own.</p></section>\n",
        money("cost.waste_run_rate.monthly_cents", w.monthly_cents(), cur),
        money("cost.waste_run_rate.hourly_cents", w.hourly_cents, cur),
        money("cost.waste_run_rate.yearly_cents", w.yearly_cents(), cur),
        money("cost.waste_run_rate.idle_held_hourly_cents", c.idle_held_rate.hourly_cents, cur),
        money("cost.waste_run_rate.truly_idle_hourly_cents", c.truly_idle_rate.hourly_cents, cur));
}

void recommendations_section(std::string& out, const ReportModel& m) {
    const std::string& cur = m.cost.currency;
    out += "<section id=\"recommendations\"><h2>§8 Recommendations</h2>\n";
    const audit::Advice& a = m.advice;
    if (!m.advice_unavailable.empty()) {
        out += "<p class=\"muted\">" + esc(m.advice_unavailable) + "</p>\n";
    } else if (a.recommendations.empty()) {
        out += "<p class=\"muted\">No rule fired: no waste pattern in this window calls for a "
               "change.</p>\n";
    } else {
        for (std::size_t i = 0; i < a.recommendations.size(); ++i) {
            recommendation(out, i, a.recommendations[i], cur);
            plan_link_html(out, m, i); // `--plan` only (report/plan_link.cpp)
        }
        const audit::Combination& c = a.combination;
        out += fmt::format(
            "<div class=\"kpis\"><div class=\"kpi\">Combined savings<b>{}/month</b>{} of the "
            "waste baseline ({}/month), over {} independent group{}: never a sum, overlapping "
            "remedies counted once{}.</div></div>\n",
            money("recommendations.combined.monthly_cents", a.savings_rate.monthly_cents(), cur),
            number("recommendations.combined.total", c.total,
                   fmt::format("{:.1f}%", c.total * 100.0)),
            money("recommendations.baseline.monthly_cents", a.baseline_rate.monthly_cents(), cur),
            c.groups.size(), c.groups.size() == 1 ? "" : "s",
            c.capped ? "; capped at the measured baseline" : "");
    }
    for (const std::string& note : m.advice_notes) {
        out += "<p class=\"small muted\">Note: " + esc(note) + "</p>\n";
    }
    if (m.health && !m.health->remedies.empty()) {
        out += "<h3>Health remedies</h3><p class=\"small muted\">From §9's findings; their worth "
               "is in clock, power and memory: outside the waste baseline and the combined "
               "savings above.</p>\n";
        for (std::size_t i = 0; i < m.health->remedies.size(); ++i) {
            health_remedy(out, i, m.health->remedies[i], cur);
        }
    }
    out += "</section>\n";
}

} // namespace gua::report::html

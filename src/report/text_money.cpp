// SPDX-License-Identifier: Apache-2.0
// §7 Cost and §8 Recommendations as text: formatting only, every number comes from the model.
#include "audit/waste.hpp"
#include "core/units.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <set>
#include <sstream>

namespace gua::report {

namespace {

/// Word-wraps `text` to `width` columns, every line starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
    std::istringstream words(text);
    std::string out;
    std::string line = indent;
    std::string word;
    while (words >> word) {
        if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent + "  ";
        }
        line += (line.size() > indent.size() && line.back() != ' ' ? " " : "") + word;
    }
    return out + line + "\n";
}

constexpr std::size_t k_wrap = 100;

} // namespace

std::string format_micros(std::int64_t micros, const std::string& currency) {
    if (micros % audit::k_micros_per_cent == 0) {
        return format_money(micros / audit::k_micros_per_cent, currency);
    }
    const std::string whole = format_money(micros / audit::k_micros_per_unit * 100, currency);
    std::string frac = fmt::format("{:06}", micros % audit::k_micros_per_unit);
    while (frac.size() > 2 && frac.back() == '0') {
        frac.pop_back();
    }
    return whole.substr(0, whole.size() - 2) + frac;
}

std::string format_money(std::int64_t cents, const std::string& currency) {
    const std::string digits = std::to_string(std::llabs(cents) / 100);
    std::string grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            grouped += ',';
        }
        grouped += digits[i];
    }
    const std::string amount =
        fmt::format("{}{}.{:02}", cents < 0 ? "-" : "", grouped, std::llabs(cents) % 100);
    if (currency == "USD") {
        return "$" + amount;
    }
    if (currency == "EUR") {
        return "€" + amount;
    }
    if (currency == "GBP") {
        return "£" + amount;
    }
    return currency + " " + amount;
}

namespace {

/// §7's rows per identity and, with allocations, per allocation owner.
void append_cost_owners(std::string& out, const ReportModel& m) {
    const CostSection& c = m.cost;
    const std::string& cur = c.currency;
    const bool alloc = m.allocation.has_value();
    if (!c.identities.empty()) {
        out += fmt::format("  {:<40}  {:>12} {:>12} {:>12}\n", "identity", "active", "idle-held",
                           "total");
        for (const IdentityCostRow& r : c.identities) {
            out +=
                fmt::format("  {:<40}  {:>12} {:>12} {:>12}\n", r.name.substr(0, 40),
                            format_money(r.active_cents, cur), format_money(r.idle_held_cents, cur),
                            format_money(r.active_cents + r.idle_held_cents, cur));
        }
    }
    if (alloc && !m.allocation->owners.empty()) {
        out += fmt::format("  {:<40}  {:>12}\n", "allocation owner", "alloc-unused");
        for (const AllocationOwnerRow& r : m.allocation->owners) {
            const std::string name = (r.kind == "namespace" ? "ns " : "") + r.name;
            out += fmt::format("  {:<40}  {:>12}\n", name.substr(0, 40),
                               format_money(r.allocated_unused_cents, cur));
        }
    }
}

} // namespace

std::vector<double> spend_percentages(const audit::StateCost& t, bool alloc) {
    std::vector<double> spend{static_cast<double>(t.active_cents),
                              static_cast<double>(t.idle_held_cents),
                              static_cast<double>(t.truly_idle_cents)};
    if (alloc) {
        spend.push_back(static_cast<double>(t.allocated_unused_cents));
    }
    return audit::rounded_percentages(spend, 1);
}

void render_cost_text(std::string& out, const ReportModel& m) {
    const CostSection& c = m.cost;
    const std::string& cur = c.currency;
    std::string source = c.price_overridden ? "--price for every GPU"
                         : c.prices_configured
                             ? "prices from gua.toml"
                             : "built-in example prices, set [pricing] in gua.toml";
    out += fmt::format("§7 Cost ({}; {}; spot discount {:.0f} %)\n", cur, source,
                       c.spot_discount * 100.0);
    if (c.gpus.empty()) {
        out += "  (no GPU cards in window)\n";
        return;
    }
    const bool alloc = m.allocation.has_value();
    // With allocations a column for allocated-unused, between idle-held and truly idle.
    const auto unused = [&](const std::string& cell) {
        return alloc ? fmt::format(" {:>12}", cell) : std::string();
    };
    out += fmt::format("  {:>3}  {:<25} {:>9}  {:>12} {:>12}{} {:>12} {:>12}\n", "gpu", "model",
                       "per GPU-h", "active", "idle-held", unused("alloc-unused"), "truly-idle",
                       "total");
    for (const GpuCostRow& g : c.gpus) {
        out += fmt::format(
            "  {:>3}  {:<25} {:>9}  {:>12} {:>12}{} {:>12} {:>12}\n", g.index,
            g.model.substr(0, 25), format_micros(g.micros_per_gpu_hour, cur),
            format_money(g.cost.active_cents, cur), format_money(g.cost.idle_held_cents, cur),
            unused(format_money(g.cost.allocated_unused_cents, cur)),
            format_money(g.cost.truly_idle_cents, cur), format_money(g.cost.total_cents(), cur));
    }
    for (const GpuCostRow& g : c.gpus) {
        if (!g.price_rule.empty()) {
            out += fmt::format("  (gpu {} is a MIG instance: {})\n", g.index, g.price_rule);
        }
    }
    const audit::StateCost& t = c.total;
    out += fmt::format("  {:<40}  {:>12} {:>12}{} {:>12} {:>12}\n", "all",
                       format_money(t.active_cents, cur), format_money(t.idle_held_cents, cur),
                       unused(format_money(t.allocated_unused_cents, cur)),
                       format_money(t.truly_idle_cents, cur), format_money(t.total_cents(), cur));
    const auto p = spend_percentages(t, alloc);
    const double p_unused = alloc ? p[3] : 0.0;
    out +=
        fmt::format("  {:<40}  {:>11.1f}% {:>11.1f}%{} {:>11.1f}% {:>11.1f}%\n", "share of spend",
                    p[0], p[1], alloc ? fmt::format(" {:>11.1f}%", p_unused) : std::string(), p[2],
                    p[0] + p[1] + p[2] + p_unused);
    append_cost_owners(out, m);
    out += fmt::format("  Waste run-rate: {}/hour → {}/month (× 720 h) → {}/year (× 8760 h)\n",
                       format_money(c.waste_rate.hourly_cents, cur),
                       format_money(c.waste_rate.monthly_cents(), cur),
                       format_money(c.waste_rate.yearly_cents(), cur));
    out += fmt::format("  (idle-held {}/hour + {}truly idle {}/hour at this window's per-card "
                       "rates; rows are rounded to the cent on their own)\n",
                       format_money(c.idle_held_rate.hourly_cents, cur),
                       alloc ? fmt::format("allocated-unused {}/hour + ",
                                           format_money(c.allocated_unused_rate.hourly_cents, cur))
                             : std::string(),
                       format_money(c.truly_idle_rate.hourly_cents, cur));
}

namespace text_money_cpp {

/// One recommendation: title, evidence, remedy and what it is worth.
void recommendation_lines(std::string& out, int n, const audit::Recommendation& r,
                          const std::string& cur) {
    out += fmt::format("  {}. {}  [{}]\n", n, r.title, r.id);
    for (const std::string& e : r.evidence) {
        out += wrap("evidence: " + e, "     ", k_wrap);
    }
    out += wrap("do: " + r.remedy, "     ", k_wrap);
    std::string worth = fmt::format(
        "worth: addresses {} GPU-hours ({}) of the baseline; wins back ~{:.0f} % of it → "
        "f = {:.3f}",
        format_hours(r.addressed_gpu_hours), format_money(r.addressed_cents, cur),
        r.recovery * 100.0, r.fraction);
    if (r.rate_reduction > 0) {
        worth += fmt::format("; spot/preemptible rate cut s = {:.3f}", r.rate_reduction);
    }
    out += wrap(worth, "     ", k_wrap);
}

/// How the recommendations combine: the product of the groups' factors, never a sum.
std::string combined_line(const audit::Advice& a, const std::string& cur) {
    const audit::Combination& c = a.combination;
    std::string product;
    for (const audit::GroupFactor& g : c.groups) {
        product += fmt::format("(1−{:.3f})", g.fraction);
    }
    std::vector<std::string> overlaps;
    for (const audit::GroupFactor& g : c.groups) {
        if (g.remedies > 1) {
            std::vector<std::string> ids;
            for (const audit::Recommendation& r : a.recommendations) {
                if (r.group == g.group) {
                    ids.push_back(r.id);
                }
            }
            overlaps.push_back(
                fmt::format("{} share the {} waste", fmt::join(ids, " and "), g.group));
        }
    }
    std::string line = fmt::format(
        "Combined: {:.1f} % of the waste baseline, {}/month = 1 − {} over {} independent "
        "group{}, never a sum; overlapping remedies counted once{}",
        c.total * 100.0, format_money(a.savings_rate.monthly_cents(), cur), product,
        c.groups.size(), c.groups.size() == 1 ? "" : "s",
        overlaps.empty() ? "" : fmt::format(" ({})", fmt::join(overlaps, "; ")));
    if (c.rate_reduction > 0) {
        line += fmt::format("; spot composes multiplicatively: 1 − (1−{:.3f})(1−{:.3f})",
                            c.utilization, c.rate_reduction);
    }
    if (c.capped) {
        line += "; capped at the measured baseline";
    }
    return line;
}

/// The waste baseline and its share per kind of waste.
std::string baseline_line(const audit::Advice& a, const std::string& cur) {
    const auto pool = [&](std::initializer_list<audit::Pool> pools) {
        double micros = 0;
        for (const audit::Pool p : pools) {
            micros += a.pool_micros[static_cast<std::size_t>(p)];
        }
        return micros;
    };
    using P = audit::Pool;
    std::vector<double> parts{
        pool({P::held_office, P::held_off_hours}), pool({P::idle_office, P::idle_off_hours}),
        pool({P::stall}), pool({P::headroom_under, P::headroom_busy}), pool({P::compute_bound})};
    // The allocated-unused pool only where an allocation source reported some.
    const bool unused = pool({P::allocated_unused}) > 0;
    if (unused) {
        parts.push_back(pool({P::allocated_unused}));
    }
    const auto shares = audit::rounded_percentages(parts, 0);
    return fmt::format("(waste baseline {}/month at this window's rates: idle-held {:.0f} %, "
                       "truly idle {:.0f} %, data-loader stalls {:.0f} %, unused SM capacity "
                       "while active {:.0f} %, compute-bound time {:.0f} %{})",
                       format_money(a.baseline_rate.monthly_cents(), cur), shares[0], shares[1],
                       shares[2], shares[3], shares[4],
                       unused ? fmt::format(", allocated-unused {:.0f} %", shares[5])
                              : std::string());
}

void savings_rules(std::string& out, const ReportModel& m) {
    const audit::Advice& a = m.advice;
    const std::string& cur = m.cost.currency;
    int n = 0;
    for (const audit::Recommendation& r : a.recommendations) {
        recommendation_lines(out, ++n, r, cur);
        plan_link_text(out, m, r); // `--plan`: the replay's figures (report/plan_link.cpp)
    }
    out += wrap(combined_line(a, cur), "  ", k_wrap);
    out += wrap(baseline_line(a, cur), "  ", k_wrap);
}

/// "2.50 GPU-hours ($5.00)", or without the money when not priced.
std::string hours_and_money(double hours, const std::optional<std::int64_t>& cents,
                            const std::string& cur) {
    return cents ? fmt::format("{} GPU-hours ({})", format_hours(hours), format_money(*cents, cur))
                 : fmt::format("{} GPU-hours", format_hours(hours));
}

void health_remedy_list(std::string& out, const HealthSection& h, const std::string& cur) {
    out += wrap("Health remedies (from §9's findings; their worth is in clock, power and memory: "
                "outside the waste baseline and the combined savings above)",
                "  ", k_wrap);
    int n = 0;
    for (const HealthRemedy& r : h.remedies) {
        out += fmt::format("  H{}. {}  [{}]\n", ++n, r.title, r.id);
        for (const std::string& e : r.evidence) {
            out += wrap("evidence: " + e, "     ", k_wrap);
        }
        out += wrap("do: " + r.remedy, "     ", k_wrap);
        std::string worth = "worth: ";
        if (r.addressed_gpu_hours) {
            worth += "concerns " + hours_and_money(*r.addressed_gpu_hours, r.addressed_cents, cur);
        }
        if (r.at_most_gpu_hours) {
            worth += "; wins back at most " +
                     hours_and_money(*r.at_most_gpu_hours, r.at_most_cents, cur);
        }
        worth += (r.addressed_gpu_hours ? " — " : "") + r.basis;
        out += wrap(worth, "     ", k_wrap);
    }
}

} // namespace text_money_cpp

void render_recommendations_text(std::string& out, const ReportModel& m) {
    using namespace text_money_cpp;
    out += "§8 Recommendations\n";
    if (!m.advice_unavailable.empty()) {
        out += "  (" + m.advice_unavailable + ")\n";
    } else if (m.advice.recommendations.empty()) {
        out += "  (no rule fired: no waste pattern in this window calls for a change)\n";
    } else {
        savings_rules(out, m);
    }
    for (const std::string& note : m.advice_notes) {
        out += wrap("note: " + note, "  ", k_wrap);
    }
    if (m.health && !m.health->remedies.empty()) {
        health_remedy_list(out, *m.health, m.cost.currency);
    }
}

} // namespace gua::report

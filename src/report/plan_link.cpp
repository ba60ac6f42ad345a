// SPDX-License-Identifier: Apache-2.0
// §8's idle-culling and gpu-sharing remedies with the plan's figures (`gua report --plan`): the
// cards the same work needs under the remedy, what releasing the rest is worth, and the
// confidence of the replay; text, JSON and HTML. Formatting only.
#include "report/plan_link.hpp"

#include "core/duration.hpp"
#include "report/html_sections.hpp"
#include "report/model.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace gua::report {

namespace plan_link_cpp {

constexpr std::size_t k_width = 100;

/// Word-wraps `text` to k_width columns, every line starting with `indent` (as §8's lines).
std::string wrapped(const std::string& text, const std::string& indent) {
    std::istringstream words(text);
    std::string out;
    std::string line = indent;
    std::string word;
    while (words >> word) {
        if (line.size() > indent.size() && line.size() + 1 + word.size() > k_width) {
            out += line + "\n";
            line = indent + "  ";
        }
        line += (line.size() > indent.size() && line.back() != ' ' ? " " : "") + word;
    }
    return out + line + "\n";
}

std::string timeout_text(const std::optional<DurationUs>& t) {
    return t ? "T = " + format_duration(*t) : std::string("no timeout");
}

std::string gpus_text(int n) {
    return fmt::format("{} GPU{}", n, n == 1 ? "" : "s");
}

/// What follows "N GPUs needed" in a scenario's line: "(drop–relaunch 2–2; in use peak 2, p95 2)
/// of 8 recorded → 6 released, $8,640.00/month; 8 sessions cut, 0 resumed later".
std::string scenario_rest(const PlanLinkScenario& s, const std::string& cur) {
    std::string out = s.objective_met ? " (" : " (wait objective not met; ";
    if (s.gpus_needed_drop != s.gpus_needed) {
        out += fmt::format("drop–relaunch {}–{}; ", s.gpus_needed_drop, s.gpus_needed);
    }
    out += fmt::format("in use peak {}, p95 {}) of {} recorded → {} released, {}/month",
                       s.peak_gpus, s.p95_gpus, s.gpus_recorded, s.gpus_released,
                       format_money(s.monthly_cents, cur));
    if (s.gpus_released_drop != s.gpus_released) {
        out += fmt::format(" (drop: {}, {}/month)", s.gpus_released_drop,
                           format_money(s.monthly_cents_drop, cur));
    }
    if (s.idle_timeout) {
        out +=
            fmt::format("; {} sessions cut, {} resumed later", s.sessions_cut, s.sessions_resumed);
    }
    if (s.share == "mps" && s.mps_slowdown > 1.0) {
        out += fmt::format("; co-runners slowed ×{:.2f}", s.mps_slowdown);
    }
    return out;
}

/// "T = 1h, mig".
std::string scenario_label(const PlanLinkScenario& s) {
    return timeout_text(s.idle_timeout) + ", " + s.share;
}

/// The headline: what the remedy's own scenario needs (culling: exclusive at the timeout;
/// sharing: the better mode without a timeout), against the recorded cards.
std::string headline(const std::vector<const PlanLinkScenario*>& scenarios, const PlanLink& link,
                     const std::string& id) {
    const PlanLinkScenario* own = scenarios.back();
    if (id != "idle-culling") {
        for (const PlanLinkScenario* s : scenarios) {
            if (!s->idle_timeout && (own->idle_timeout || s->gpus_needed < own->gpus_needed)) {
                own = s;
            }
        }
    }
    std::string mode = own->share;
    std::transform(mode.begin(), mode.end(), mode.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return fmt::format(
        "plan: the same work fits on {}{}{} ({} recorded){}; T is {}", gpus_text(own->gpus_needed),
        own->share == "exclusive" ? std::string() : " with " + mode,
        own->idle_timeout ? " at " + timeout_text(own->idle_timeout) : ", without a timeout",
        own->gpus_recorded, own->objective_met ? "" : ", wait objective not met",
        link.idle_timeout_basis);
}

nlohmann::json seconds(const std::optional<DurationUs>& us) {
    return us ? nlohmann::json(static_cast<double>(*us) / static_cast<double>(k_us_per_second))
              : nlohmann::json(nullptr);
}

nlohmann::json scenario_json(const PlanLinkScenario& s) {
    return {{"idle_timeout_s", seconds(s.idle_timeout)},
            {"share", s.share},
            {"gpus_recorded", s.gpus_recorded},
            {"gpus_needed", s.gpus_needed},
            {"gpus_needed_drop", s.gpus_needed_drop},
            {"objective_met", s.objective_met},
            {"peak_gpus", s.peak_gpus},
            {"p99_gpus", s.p99_gpus},
            {"p95_gpus", s.p95_gpus},
            {"gpus_released", s.gpus_released},
            {"gpus_released_drop", s.gpus_released_drop},
            {"monthly_cents", s.monthly_cents},
            {"monthly_cents_drop", s.monthly_cents_drop},
            {"sessions_cut", s.sessions_cut},
            {"sessions_resumed", s.sessions_resumed},
            {"mps_slowdown", s.mps_slowdown},
            {"interactive_p95_wait_s", seconds(s.interactive_p95_wait)},
            {"batch_p95_wait_s", seconds(s.batch_p95_wait)}};
}

nlohmann::json confidence_json(const PlanLinkConfidence& c) {
    const double window = static_cast<double>(c.window_us);
    nlohmann::json retention = nullptr;
    if (c.raw_retention_us) {
        retention = static_cast<double>(*c.raw_retention_us) / static_cast<double>(k_us_per_day);
    }
    return {{"window_s", seconds(c.window_us)},
            {"recorded_s", seconds(c.recorded_us)},
            {"coverage", window > 0 ? static_cast<double>(c.recorded_us) / window : 0.0},
            {"unmeasured_share", c.unmeasured_share},
            {"snapshot_share", c.snapshot_share},
            {"unattributed_share", c.unattributed_share},
            {"units", c.units},
            {"card_ticks", c.card_ticks},
            {"raw_retention_days", retention},
            {"notes", c.notes}};
}

bool linked(const ReportModel& m, const std::string& id) {
    return m.plan_link && (id == "idle-culling" || id == "gpu-sharing");
}

} // namespace plan_link_cpp

std::vector<const PlanLinkScenario*> plan_scenarios_for(const PlanLink& link,
                                                        const std::string& id) {
    std::vector<const PlanLinkScenario*> out;
    for (const PlanLinkScenario& s : link.scenarios) {
        const bool exclusive = s.share == "exclusive";
        if ((id == "idle-culling" && exclusive) || (id == "gpu-sharing" && !exclusive)) {
            out.push_back(&s);
        }
    }
    return out;
}

void plan_link_text(std::string& out, const ReportModel& m, const audit::Recommendation& r) {
    if (!plan_link_cpp::linked(m, r.id)) {
        return;
    }
    const PlanLink& link = *m.plan_link;
    const std::vector<const PlanLinkScenario*> scenarios = plan_scenarios_for(link, r.id);
    if (!link.unavailable.empty() || scenarios.empty()) {
        out += plan_link_cpp::wrapped("plan: not replayed — " + link.unavailable, "     ");
        return;
    }
    out += plan_link_cpp::wrapped(plan_link_cpp::headline(scenarios, link, r.id), "     ");
    for (const PlanLinkScenario* s : scenarios) {
        out += plan_link_cpp::wrapped(fmt::format("- {}: {} needed{}",
                                                  plan_link_cpp::scenario_label(*s),
                                                  plan_link_cpp::gpus_text(s->gpus_needed),
                                                  plan_link_cpp::scenario_rest(*s, link.currency)),
                                      "       ");
    }
    for (const std::string& note : link.confidence.notes) {
        out += plan_link_cpp::wrapped("confidence: " + note, "       ");
    }
}

void plan_link_json(nlohmann::json& item, const ReportModel& m, const audit::Recommendation& r) {
    if (!plan_link_cpp::linked(m, r.id)) {
        return;
    }
    const PlanLink& link = *m.plan_link;
    nlohmann::json plan{{"computed", link.unavailable.empty()},
                        {"idle_timeout_s", plan_link_cpp::seconds(link.idle_timeout_us)},
                        {"idle_timeout_basis", link.idle_timeout_basis},
                        {"currency", link.currency}};
    if (!link.unavailable.empty()) {
        plan["not_computed_reason"] = link.unavailable;
    } else {
        nlohmann::json scenarios = nlohmann::json::array();
        for (const PlanLinkScenario* s : plan_scenarios_for(link, r.id)) {
            scenarios.push_back(plan_link_cpp::scenario_json(*s));
        }
        plan["scenarios"] = scenarios;
        plan["confidence"] = plan_link_cpp::confidence_json(link.confidence);
    }
    item["plan"] = plan;
}

void plan_link_html(std::string& out, const ReportModel& m, std::size_t i) {
    constexpr std::string_view k_close = "</article>\n";
    if (i >= m.advice.recommendations.size() ||
        !plan_link_cpp::linked(m, m.advice.recommendations[i].id) || !out.ends_with(k_close)) {
        return;
    }
    const std::string& id = m.advice.recommendations[i].id;
    const PlanLink& link = *m.plan_link;
    const std::vector<const PlanLinkScenario*> scenarios = plan_scenarios_for(link, id);
    out.resize(out.size() - k_close.size());
    if (!link.unavailable.empty() || scenarios.empty()) {
        out += "<p class=\"worth\">Plan: not replayed — " + html::esc(link.unavailable) + "</p>";
        out += k_close;
        return;
    }
    out += "<p class=\"worth\">" + html::esc(plan_link_cpp::headline(scenarios, link, id)) +
           ".</p><ul>";
    for (std::size_t k = 0; k < scenarios.size(); ++k) {
        const std::string key = fmt::format("recommendations.items.{}.plan.scenarios.{}.", i, k);
        const PlanLinkScenario& s = *scenarios[k];
        out += fmt::format("<li>{}: {} needed{}</li>", html::esc(plan_link_cpp::scenario_label(s)),
                           html::number(key + "gpus_needed", s.gpus_needed,
                                        plan_link_cpp::gpus_text(s.gpus_needed)),
                           html::esc(plan_link_cpp::scenario_rest(s, link.currency)));
    }
    out += "</ul><p class=\"small muted\">Confidence: ";
    for (const std::string& note : link.confidence.notes) {
        out += html::esc(note) + ". ";
    }
    out += "</p>";
    out += k_close;
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The plan as text: the sensitivity table (timeouts × sharing modes), cuts, waits, savings per
// scenario, and the confidence statement.
#include "core/duration.hpp"
#include "core/time.hpp"
#include "plan/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::plan {

namespace {

std::string pct(DurationUs part, DurationUs whole) {
    return whole > 0 ? fmt::format("{:.1f} %",
                                   100.0 * static_cast<double>(part) / static_cast<double>(whole))
                     : "n/a";
}

std::string wait_text(const std::optional<DurationUs>& us) {
    if (!us) {
        return "-";
    }
    return *us == 0 ? "0s" : format_duration(*us);
}

std::string gpus(int n) {
    return fmt::format("{} {}", n, n == 1 ? "GPU" : "GPUs");
}

std::string money(std::int64_t cents, const std::string& currency) {
    return fmt::format("{} {}.{:02}", currency, cents / 100, cents % 100);
}

/// "5" when both bands agree, else "4–6"; a "!" when the objective was not met.
std::string needed_cell(const Scenario& s) {
    std::string text = s.drop.gpus_needed == s.relaunch.gpus_needed
                           ? fmt::format("{}", s.relaunch.gpus_needed)
                           : fmt::format("{}–{}", s.drop.gpus_needed, s.relaunch.gpus_needed);
    if (!s.relaunch.met) {
        text += "!";
    }
    return fmt::format("{} (p95 {})", text, s.relaunch.concurrency.p95);
}

void sensitivity_table(std::string& out, const PlanResult& plan) {
    std::vector<Share> shares;
    std::map<std::string, std::map<Share, const Scenario*>> rows;
    std::vector<std::string> order;
    for (const Scenario& s : plan.scenarios) {
        const std::string t = timeout_label(s.idle_timeout);
        if (!rows.contains(t)) {
            order.push_back(t);
        }
        rows[t][s.share] = &s;
        if (std::find(shares.begin(), shares.end(), s.share) == shares.end()) {
            shares.push_back(s.share);
        }
    }
    out += "GPUs needed (drop–relaunch band; p95 of GPUs in use with no queue)\n";
    out += fmt::format("  {:<14}", "idle timeout");
    for (Share sh : shares) {
        out += fmt::format("{:<20}", to_string(sh));
    }
    out += "\n";
    for (const std::string& t : order) {
        out += fmt::format("  {:<14}", t);
        for (Share sh : shares) {
            const auto it = rows[t].find(sh);
            out += fmt::format("{:<20}", it == rows[t].end() ? "" : needed_cell(*it->second));
        }
        out += "\n";
    }
}

void scenario_lines(std::string& out, const Scenario& s, const PlanResult& plan) {
    const std::string& cur = plan.options.pricing.currency;
    out +=
        fmt::format("  T = {}, {}: {} needed ({} drop); in use peak {}, p99 {}, p95 {}",
                    timeout_label(s.idle_timeout), to_string(s.share), gpus(s.relaunch.gpus_needed),
                    s.drop.gpus_needed, s.relaunch.concurrency.peak, s.relaunch.concurrency.p99,
                    s.relaunch.concurrency.p95);
    if (!s.relaunch.met) {
        out += " — the wait objective is not met even at the search limit";
    }
    out += "\n";
    out += fmt::format("    waits: interactive p95 {} (max {}), batch p95 {} (max {})\n",
                       wait_text(s.relaunch.interactive.p95_us),
                       wait_text(s.relaunch.interactive.max_us), wait_text(s.relaunch.batch.p95_us),
                       wait_text(s.relaunch.batch.max_us));
    if (s.idle_timeout) {
        out += fmt::format("    cut: {} sessions, {} resumed later (median return {})\n",
                           s.cuts.killed, s.cuts.resumed, wait_text(s.cuts.median_return_us));
    }
    if (s.share == Share::mps && s.relaunch.mps_slowdown > 1.0) {
        out += fmt::format("    MPS: co-runners stretched ×{:.2f} on average\n",
                           s.relaunch.mps_slowdown);
    }
    for (const PoolScenario& p : s.pools) {
        if (p.mig_profiles.empty()) {
            continue;
        }
        std::string profiles;
        for (const auto& [name, n] : p.mig_profiles) {
            profiles += fmt::format("{}{} × {}", profiles.empty() ? "" : ", ", n, name);
        }
        out += fmt::format("    MIG on {}: {}\n", plan.pools[p.pool].model, profiles);
    }
    out += fmt::format("    release {} of {} GPUs ({} with drop): {}/month ({} with drop)",
                       s.savings.gpus_released, s.savings.gpus_recorded,
                       s.savings.gpus_released_drop, money(s.savings.cents_per_month, cur),
                       money(s.savings.cents_per_month_drop, cur));
    if (s.savings.kwh_per_month) {
        out += fmt::format(", {:.0f} kWh/month at idle power", *s.savings.kwh_per_month);
    }
    out += "\n";
}

/// "The recorded work fits on 7 GPUs at T = 1h (exclusive), 4 with MIG, 3 with MPS; 12 without
/// a policy." from the scenarios asked for; "" when there is nothing to compare.
std::string headline(const PlanResult& plan) {
    const Scenario* base = nullptr;
    std::vector<const Scenario*> cut;
    for (const Scenario& s : plan.scenarios) {
        if (!s.idle_timeout && s.share == Share::exclusive) {
            base = &s;
        } else if (s.idle_timeout == k_us_per_hour ||
                   (plan.scenarios.size() <= 3 && s.idle_timeout)) {
            cut.push_back(&s);
        }
    }
    if (cut.empty()) {
        return "";
    }
    std::string out = "The recorded work fits on";
    for (std::size_t i = 0; i < cut.size(); ++i) {
        out += fmt::format("{} {} at T = {} ({})", i == 0 ? "" : ",",
                           gpus(cut[i]->relaunch.gpus_needed), timeout_label(cut[i]->idle_timeout),
                           to_string(cut[i]->share));
    }
    if (base != nullptr) {
        out += fmt::format("; {} without a policy", base->relaunch.gpus_needed);
    }
    return out + ".\n";
}

} // namespace

std::string timeout_label(const std::optional<DurationUs>& timeout) {
    return timeout ? format_duration(*timeout) : "none";
}

std::vector<std::string> confidence_lines(const PlanResult& plan) {
    const Coverage& c = plan.coverage;
    std::vector<std::string> out;
    out.push_back(fmt::format("raw card-ticks cover {} of the window ({} of {}); time without "
                              "them is not replayed, never counted as free",
                              pct(c.recorded_us, c.window_us), format_duration(c.recorded_us),
                              format_duration(c.window_us)));
    out.push_back(fmt::format("card time: {} unmeasured, {} measured by a single snapshot, {} "
                              "busy with no listed process (replayed as whole-card units)",
                              pct(c.unmeasured_us, c.card_us), pct(c.snapshot_us, c.card_us),
                              pct(c.unattributed_us, c.card_us)));
    out.push_back(fmt::format("{} units ({} gangs, {} interactive); {} without per-process "
                              "compute readings, {} with compute from the SM % (an upper "
                              "bound), {} with memory unknown (sized as a whole card)",
                              plan.units, plan.gangs, plan.interactive_units,
                              plan.units_without_readings, plan.units_temporal_compute,
                              plan.units_memory_unknown));
    if (c.raw_retention_us) {
        out.push_back(fmt::format("raw ticks are kept {}: the replay covers only that (rollups "
                                  "carry no per-process detail)",
                                  format_duration(*c.raw_retention_us)));
    } else {
        out.push_back("raw ticks are kept without limit; rollups carry no per-process detail");
    }
    return out;
}

std::string plan_text(const PlanResult& plan) {
    std::string out =
        fmt::format("gua plan: {} to {}\n", format_iso8601(plan.from), format_iso8601(plan.to));
    out += fmt::format("Objective: p95 wait at most {} for interactive units, {} for the rest; "
                       "a relaunched unit warms up {} at full memory.\n",
                       format_duration(plan.options.objective.interactive_us),
                       format_duration(plan.options.objective.batch_us),
                       format_duration(k_relaunch_warmup_us));
    for (const Pool& p : plan.pools) {
        out += fmt::format("Recorded: {} × {} ({} MiB, up to {} a host)\n", p.gpus, p.model,
                           p.memory_mib, p.gpus_per_host);
    }
    out += headline(plan);
    out += "\n";
    sensitivity_table(out, plan);
    out += "\nScenarios";
    out += plan.options.gpus ? fmt::format(" (waits on {} GPUs a model)\n", *plan.options.gpus)
                             : " (waits on the GPUs needed)\n";
    for (const Scenario& s : plan.scenarios) {
        scenario_lines(out, s, plan);
    }
    out += "\nConfidence\n";
    for (const std::string& line : confidence_lines(plan)) {
        out += "  - " + line + "\n";
    }
    return out;
}

} // namespace gua::plan

// SPDX-License-Identifier: Apache-2.0
// `gua report --plan`: the plan of the report's window at the culling timeout and each sharing
// mode, turned into the figures §8's idle-culling and gpu-sharing remedies carry.
#include "cli/report_plan.hpp"

#include "core/duration.hpp"
#include "plan/load.hpp"
#include "plan/render.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gua::cli {

namespace {

double share_of(DurationUs part, DurationUs whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

report::PlanLinkScenario scenario_of(const plan::Scenario& s) {
    report::PlanLinkScenario out;
    out.idle_timeout = s.idle_timeout;
    out.share = std::string(plan::to_string(s.share));
    out.gpus_recorded = s.savings.gpus_recorded;
    out.gpus_needed = s.relaunch.gpus_needed;
    out.gpus_needed_drop = s.drop.gpus_needed;
    out.objective_met = s.relaunch.met && s.drop.met;
    out.peak_gpus = s.relaunch.concurrency.peak;
    out.p99_gpus = s.relaunch.concurrency.p99;
    out.p95_gpus = s.relaunch.concurrency.p95;
    out.gpus_released = s.savings.gpus_released;
    out.gpus_released_drop = s.savings.gpus_released_drop;
    out.monthly_cents = s.savings.cents_per_month;
    out.monthly_cents_drop = s.savings.cents_per_month_drop;
    out.sessions_cut = s.cuts.killed;
    out.sessions_resumed = s.cuts.resumed;
    out.mps_slowdown = s.relaunch.mps_slowdown;
    out.interactive_p95_wait = s.relaunch.interactive.p95_us;
    out.batch_p95_wait = s.relaunch.batch.p95_us;
    return out;
}

} // namespace

PlanTimeout culling_timeout(const policy::PolicyConfig& policy) {
    const policy::Rule* shortest = nullptr;
    for (const policy::Rule& r : policy.rules) {
        if (policy.enabled && r.action == policy::Action::terminate &&
            (shortest == nullptr || r.after_us < shortest->after_us)) {
            shortest = &r;
        }
    }
    PlanTimeout out;
    if (shortest == nullptr) {
        out.basis = fmt::format("{} by default: no enabled [[policy.rule]] terminates idle holders",
                                format_duration(out.us));
        return out;
    }
    out.us = shortest->after_us;
    const bool narrowed = !shortest->users.empty() || !shortest->groups.empty() ||
                          !shortest->commands.empty() || !shortest->containers.empty() ||
                          !shortest->gpus.empty() || shortest->min_memory_mib.has_value();
    out.basis =
        fmt::format("{}, the after of [[policy.rule]] \"{}\" (terminate{}){}",
                    format_duration(out.us), shortest->name, shortest->dry_run ? ", dry run" : "",
                    narrowed ? ", applied here to every session" : "");
    return out;
}

plan::PlanOptions link_options(DurationUs timeout, const audit::Pricing& pricing) {
    plan::PlanOptions o;
    o.timeouts = {std::nullopt, timeout};
    o.shares = {plan::Share::exclusive, plan::Share::mig, plan::Share::mps};
    o.pricing = pricing;
    return o;
}

report::PlanLink plan_link_of(const plan::PlanResult& result, const PlanTimeout& timeout) {
    report::PlanLink out;
    out.idle_timeout_us = timeout.us;
    out.idle_timeout_basis = timeout.basis;
    out.currency = result.options.pricing.currency;
    for (const plan::Scenario& s : result.scenarios) {
        out.scenarios.push_back(scenario_of(s));
    }
    const plan::Coverage& c = result.coverage;
    report::PlanLinkConfidence& k = out.confidence;
    k.window_us = c.window_us;
    k.recorded_us = c.recorded_us;
    k.unmeasured_share = share_of(c.unmeasured_us, c.card_us);
    k.snapshot_share = share_of(c.snapshot_us, c.card_us);
    k.unattributed_share = share_of(c.unattributed_us, c.card_us);
    k.units = result.units;
    k.card_ticks = c.raw_ticks;
    k.raw_retention_us = c.raw_retention_us;
    k.notes = plan::confidence_lines(result);
    return out;
}

report::PlanLink replay_for_report(store::Database& db, const report::BuildOptions& options,
                                   const config::Config& cfg) {
    const PlanTimeout timeout = culling_timeout(cfg.policy);
    plan::LoadOptions load;
    load.from = options.from;
    load.to = options.to;
    load.gpu = options.gpu;
    load.user = options.user;
    load.thresholds = options.thresholds;
    load.raw_retention_us = cfg.retention.raw_us;
    const plan::Demand demand = plan::load_demand(db, load);
    if (demand.coverage.raw_ticks == 0) {
        report::PlanLink out;
        out.idle_timeout_us = timeout.us;
        out.idle_timeout_basis = timeout.basis;
        out.currency = options.pricing.currency;
        out.unavailable = fmt::format("no raw card-ticks from {} to {} (the plan needs "
                                      "per-process detail, which rollups do not keep)",
                                      format_iso8601(options.from), format_iso8601(options.to));
        return out;
    }
    return plan_link_of(plan::run_plan(demand, link_options(timeout.us, options.pricing)), timeout);
}

int print_report_with_plan(const std::string& db_path, report::BuildOptions options,
                           const ReportFlags& flags, const config::Config& cfg) {
    const TimeZone tz = report_zone(options);
    options.top_identities = flags.top;
    store::Database db(db_path, store::OpenMode::read_only);
    report::ReportModel m = report::build_report(db, options, tz);
    m.plan_link = replay_for_report(db, options, cfg);
    const bool linked =
        std::any_of(m.advice.recommendations.begin(), m.advice.recommendations.end(),
                    [](const audit::Recommendation& r) {
                        return r.id == "idle-culling" || r.id == "gpu-sharing";
                    });
    if (!linked) {
        m.advice_notes.push_back("--plan: neither the idle-culling nor the gpu-sharing rule fired "
                                 "in this window, so no remedy carries the plan's figures; `gua "
                                 "plan` shows the whole replay");
    }
    return print_model(m, flags);
}

} // namespace gua::cli

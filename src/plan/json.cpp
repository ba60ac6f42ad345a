// SPDX-License-Identifier: Apache-2.0
// The plan as JSON: scenarios[] (idle_timeout, share, gpus_needed, peak/p99/p95_gpus, band,
// wait, savings) and confidence.
#include "core/time.hpp"
#include "plan/render.hpp"

namespace gua::plan {

namespace {

using nlohmann::json;

json seconds(const std::optional<DurationUs>& us) {
    if (!us) {
        return nullptr;
    }
    return static_cast<double>(*us) / static_cast<double>(k_us_per_second);
}

double fraction(DurationUs part, DurationUs whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

json waits_json(const Waits& w) {
    return json{{"count", w.count},
                {"p50_s", seconds(w.p50_us)},
                {"p95_s", seconds(w.p95_us)},
                {"max_s", seconds(w.max_us)},
                {"never_started", w.never_started}};
}

json band_json(const BandFigures& b) {
    return json{{"gpus_needed", b.gpus_needed},    {"objective_met", b.met},
                {"peak_gpus", b.concurrency.peak}, {"p99_gpus", b.concurrency.p99},
                {"p95_gpus", b.concurrency.p95},   {"holds", b.holds},
                {"mps_slowdown", b.mps_slowdown}};
}

json savings_json(const Savings& s, const PlanResult& plan) {
    json kwh = nullptr;
    if (s.kwh_per_month) {
        kwh = *s.kwh_per_month;
    }
    return json{{"gpus_recorded", s.gpus_recorded},
                {"gpus_released", s.gpus_released},
                {"gpus_released_drop", s.gpus_released_drop},
                {"currency", plan.options.pricing.currency},
                {"per_month", static_cast<double>(s.cents_per_month) / 100.0},
                {"per_month_drop", static_cast<double>(s.cents_per_month_drop) / 100.0},
                {"idle_kwh_per_month", kwh}};
}

json scenario_json(const Scenario& s, const PlanResult& plan) {
    json pools = json::array();
    for (const PoolScenario& p : s.pools) {
        pools.push_back(
            json{{"model", plan.pools[p.pool].model},
                 {"share", std::string(to_string(p.share))},
                 {"band", {{"drop", band_json(p.drop)}, {"relaunch", band_json(p.relaunch)}}},
                 {"mig_profiles", p.mig_profiles}});
    }
    const CutFigures& c = s.cuts;
    return json{
        {"idle_timeout", seconds(s.idle_timeout)},
        {"share", std::string(to_string(s.share))},
        {"gpus_needed", s.relaunch.gpus_needed},
        {"objective_met", s.relaunch.met},
        {"peak_gpus", s.relaunch.concurrency.peak},
        {"p99_gpus", s.relaunch.concurrency.p99},
        {"p95_gpus", s.relaunch.concurrency.p95},
        {"band", {{"drop", band_json(s.drop)}, {"relaunch", band_json(s.relaunch)}}},
        {"wait",
         {{"at_gpus", plan.options.gpus ? json(*plan.options.gpus) : json("gpus_needed")},
          {"interactive", waits_json(s.relaunch.interactive)},
          {"batch", waits_json(s.relaunch.batch)}}},
        {"cuts",
         {{"killed", c.killed},
          {"resumed", c.resumed},
          {"resumed_share",
           c.killed > 0 ? static_cast<double>(c.resumed) / static_cast<double>(c.killed) : 0.0},
          {"median_return_s", seconds(c.median_return_us)},
          {"idle_held_hours_saved", to_hours(c.held_saved_us)}}},
        {"savings", savings_json(s.savings, plan)},
        {"pools", pools}};
}

json confidence_json(const PlanResult& plan) {
    const Coverage& c = plan.coverage;
    json retention = nullptr;
    if (c.raw_retention_us) {
        retention = static_cast<double>(*c.raw_retention_us) / static_cast<double>(k_us_per_day);
    }
    return json{{"window_s", seconds(c.window_us)},
                {"recorded_s", seconds(c.recorded_us)},
                {"coverage", fraction(c.recorded_us, c.window_us)},
                {"card_hours", to_hours(c.card_us)},
                {"card_ticks", c.raw_ticks},
                {"unmeasured_share", fraction(c.unmeasured_us, c.card_us)},
                {"snapshot_share", fraction(c.snapshot_us, c.card_us)},
                {"unattributed_share", fraction(c.unattributed_us, c.card_us)},
                {"units", plan.units},
                {"gangs", plan.gangs},
                {"interactive_units", plan.interactive_units},
                {"units_without_per_process_readings", plan.units_without_readings},
                {"units_memory_unknown", plan.units_memory_unknown},
                {"units_compute_upper_bound", plan.units_temporal_compute},
                {"raw_retention_days", retention},
                {"notes", confidence_lines(plan)}};
}

} // namespace

nlohmann::json plan_json(const PlanResult& plan) {
    json pools = json::array();
    for (const Pool& p : plan.pools) {
        json watts = nullptr;
        if (p.idle_power_w) {
            watts = *p.idle_power_w;
        }
        pools.push_back(json{{"model", p.model},
                             {"memory_mib", p.memory_mib},
                             {"gpus_recorded", p.gpus},
                             {"gpus_per_host", p.gpus_per_host},
                             {"idle_power_w", watts}});
    }
    json scenarios = json::array();
    for (const Scenario& s : plan.scenarios) {
        scenarios.push_back(scenario_json(s, plan));
    }
    return json{{"window", {{"from", format_iso8601(plan.from)}, {"to", format_iso8601(plan.to)}}},
                {"objective",
                 {{"interactive_p95_wait_s", seconds(plan.options.objective.interactive_us)},
                  {"batch_p95_wait_s", seconds(plan.options.objective.batch_us)}}},
                {"gpus", plan.options.gpus ? json(*plan.options.gpus) : json(nullptr)},
                {"relaunch_warmup_s", seconds(k_relaunch_warmup_us)},
                {"pools", pools},
                {"scenarios", scenarios},
                {"confidence", confidence_json(plan)}};
}

} // namespace gua::plan

// SPDX-License-Identifier: Apache-2.0
// The `cost` and `recommendations` JSON objects: money in integer cents, shares as fractions.
#include "report/json_sections.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gua::report {

namespace {

using nlohmann::json;

/// A state cost; allocated_unused_cents only in reports with allocations (`alloc`).
json state_cost(const audit::StateCost& c, bool alloc) {
    json j{{"active_cents", c.active_cents},
           {"idle_held_cents", c.idle_held_cents},
           {"truly_idle_cents", c.truly_idle_cents},
           {"waste_cents", c.waste_cents()},
           {"total_cents", c.total_cents()}};
    if (alloc) {
        j["allocated_unused_cents"] = c.allocated_unused_cents;
    }
    return j;
}

json run_rate(const audit::RunRate& r) {
    return json{{"hourly_cents", r.hourly_cents},
                {"monthly_cents", r.monthly_cents()},
                {"yearly_cents", r.yearly_cents()}};
}

double price_units(std::int64_t micros) {
    return static_cast<double>(micros) / static_cast<double>(audit::k_micros_per_unit);
}

} // namespace

json cost_json(const ReportModel& m) {
    const CostSection& c = m.cost;
    const bool alloc = m.allocation.has_value();
    json gpus = json::array();
    for (const GpuCostRow& g : c.gpus) {
        json row = state_cost(g.cost, alloc);
        row["index"] = g.index;
        row["model"] = g.model;
        row["price_per_gpu_hour"] = price_units(g.micros_per_gpu_hour);
        row["card_fraction"] = g.card_fraction;
        if (!g.price_rule.empty()) {
            row["price_rule"] = g.price_rule;
        }
        gpus.push_back(row);
    }
    json identities = json::array();
    for (const IdentityCostRow& r : c.identities) {
        identities.push_back({{"name", r.name},
                              {"active_cents", r.active_cents},
                              {"idle_held_cents", r.idle_held_cents},
                              {"total_cents", r.active_cents + r.idle_held_cents}});
    }
    json rate = run_rate(c.waste_rate);
    rate["idle_held_hourly_cents"] = c.idle_held_rate.hourly_cents;
    rate["truly_idle_hourly_cents"] = c.truly_idle_rate.hourly_cents;
    if (alloc) {
        rate["allocated_unused_hourly_cents"] = c.allocated_unused_rate.hourly_cents;
    }
    rate["hours_per_month"] = audit::k_hours_per_month;
    rate["hours_per_year"] = audit::k_hours_per_year;
    json out{{"currency", c.currency},
             {"price_source", c.price_overridden    ? "override"
                              : c.prices_configured ? "config"
                                                    : "built_in"},
             {"spot_discount", c.spot_discount},
             {"gpus", gpus},
             {"total", state_cost(c.total, alloc)},
             {"identities", identities},
             {"waste_run_rate", rate}};
    if (alloc) {
        json owners = json::array();
        for (const AllocationOwnerRow& r : m.allocation->owners) {
            owners.push_back({{"name", r.name},
                              {"kind", r.kind},
                              {"allocated_unused_cents", r.allocated_unused_cents}});
        }
        out["allocation_owners"] = owners;
    }
    return out;
}

namespace {

json recommendation_json(const audit::Recommendation& r) {
    json pools = json::array();
    for (const audit::Pool p : r.pools) {
        pools.push_back(audit::to_string(p));
    }
    return {{"id", r.id},
            {"title", r.title},
            {"remedy", r.remedy},
            {"evidence", r.evidence},
            {"gpus", r.gpus},
            {"identities", r.identities},
            {"hours", r.hours},
            {"group", r.group},
            {"pools", pools},
            {"addressed_gpu_hours", r.addressed_gpu_hours},
            {"addressed_cents", r.addressed_cents},
            {"recovery", r.recovery},
            {"savings_fraction", r.fraction},
            {"rate_reduction", r.rate_reduction}};
}

/// The baseline run rate, with the window's cost and each pool's hours and cents.
json baseline_json(const audit::Advice& a) {
    json pools = json::object();
    for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
        // Only with allocations, so that reports without an allocation source keep their keys.
        if (static_cast<audit::Pool>(p) == audit::Pool::allocated_unused &&
            a.pool_gpu_hours[p] <= 0) {
            continue;
        }
        pools[audit::to_string(static_cast<audit::Pool>(p))] = {{"gpu_hours", a.pool_gpu_hours[p]},
                                                                {"cents", a.pool_cents[p]}};
    }
    json baseline = run_rate(a.baseline_rate);
    baseline["window_cents"] = a.baseline_cents;
    baseline["pools"] = pools;
    return baseline;
}

/// The combined savings: each group's factor and the formula that composes them.
json combined_json(const audit::Advice& a) {
    const audit::Combination& c = a.combination;
    json groups = json::array();
    std::string formula = "1";
    for (const audit::GroupFactor& g : c.groups) {
        groups.push_back({{"group", g.group}, {"fraction", g.fraction}, {"remedies", g.remedies}});
        formula += fmt::format(" (1 - {:.3f})", g.fraction);
    }
    formula = c.groups.empty() ? "0" : "1 - " + formula.substr(2);
    json combined = run_rate(a.savings_rate);
    combined["groups"] = groups;
    combined["utilization"] = c.utilization;
    combined["rate_reduction"] = c.rate_reduction;
    combined["total"] = c.total;
    combined["capped"] = c.capped;
    combined["window_cents"] =
        std::llround(c.savings / static_cast<double>(audit::k_micros_per_cent));
    combined["formula"] = formula;
    return combined;
}

json health_remedies_json(const ReportModel& m) {
    json health = json::array();
    if (m.health) {
        const auto or_null = [](const auto& v) { return v ? json(*v) : json(); };
        for (const HealthRemedy& r : m.health->remedies) {
            health.push_back({{"id", r.id},
                              {"title", r.title},
                              {"remedy", r.remedy},
                              {"evidence", r.evidence},
                              {"gpus", r.gpus},
                              {"addressed_gpu_hours", or_null(r.addressed_gpu_hours)},
                              {"addressed_cents", or_null(r.addressed_cents)},
                              {"at_most_gpu_hours", or_null(r.at_most_gpu_hours)},
                              {"at_most_cents", or_null(r.at_most_cents)},
                              {"basis", r.basis}});
        }
    }
    return health;
}

} // namespace

json recommendations_json(const ReportModel& m) {
    const audit::Advice& a = m.advice;
    json items = json::array();
    for (const audit::Recommendation& r : a.recommendations) {
        items.push_back(recommendation_json(r));
        plan_link_json(items.back(), m, r); // `--plan` only (report/plan_link.cpp)
    }
    json out{{"items", items},
             {"baseline", baseline_json(a)},
             {"combined", combined_json(a)},
             {"health", health_remedies_json(m)},
             {"computed", m.advice_unavailable.empty()},
             {"pools_time_zone", m.pools_time_zone.empty() ? m.time_zone : m.pools_time_zone},
             {"notes", m.advice_notes}};
    if (!m.advice_unavailable.empty()) {
        out["not_computed_reason"] = m.advice_unavailable;
    }
    return out;
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// run_plan: the scenarios of the sweep, replayed pool by pool.
#include "plan/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace gua::plan {

std::vector<std::optional<DurationUs>> sweep_timeouts() {
    return {15 * k_us_per_minute, 30 * k_us_per_minute, k_us_per_hour, 2 * k_us_per_hour,
            4 * k_us_per_hour,    8 * k_us_per_hour,    std::nullopt};
}

namespace {

/// The share of hold `h` that unit `u` was recorded active.
double active_share(const Unit& u, const Hold& h) {
    if (h.end <= h.begin) {
        return 0.0;
    }
    auto it = std::partition_point(u.phases.begin(), u.phases.end(),
                                   [&](const Phase& p) { return p.end <= h.begin; });
    DurationUs active = 0;
    for (; it != u.phases.end() && it->begin < h.end; ++it) {
        if (it->active) {
            active += std::min(it->end, h.end) - std::max(it->begin, h.begin);
        }
    }
    return static_cast<double>(active) / static_cast<double>(h.end - h.begin);
}

} // namespace

std::vector<Request> requests_of(const Demand& demand, const std::vector<Hold>& holds,
                                 std::size_t pool, const Sizing& sizing,
                                 std::map<std::string, std::int64_t>* profiles) {
    std::vector<Request> out;
    std::vector<char> counted(demand.units.size(), 0);
    std::string profile;
    for (const Hold& h : holds) {
        const Unit& u = demand.units[h.unit];
        if (u.pool != pool) {
            continue;
        }
        const Capacity need = sizing.need(u, &profile);
        if (profiles != nullptr && counted[h.unit] == 0) {
            counted[h.unit] = 1;
            ++(*profiles)[profile.empty() ? "whole card" : profile];
        }
        const bool shares_sms = sizing.share == Share::mps && need != sizing.card;
        const double load = shares_sms ? u.mean_compute_pct() * active_share(u, h) : 0.0;
        out.push_back(Request{h.begin, h.end - h.begin, u.gpus, need, u.interactive, load});
    }
    return out;
}

namespace {

int largest_gang(const std::vector<Request>& requests) {
    int k = 1;
    for (const Request& r : requests) {
        k = std::max(k, r.gpus);
    }
    return k;
}

BandFigures band_on_pool(const Demand& demand, const std::vector<Hold>& holds, std::size_t pool,
                         const Sizing& sizing, const PlanOptions& options,
                         std::map<std::string, std::int64_t>* profiles) {
    const std::vector<Request> requests = requests_of(demand, holds, pool, sizing, profiles);
    BandFigures out;
    out.holds = static_cast<std::int64_t>(requests.size());
    double run_us = 0;
    double solo_us = 0;
    const std::vector<Step> steps = unbounded(requests, sizing.card, &run_us, &solo_us);
    out.concurrency = concurrency_of(steps, demand.recorded);
    if (sizing.share == Share::mps && solo_us > 0) {
        out.mps_slowdown = run_us / solo_us;
    }
    int peak = 0;
    for (const Step& s : steps) {
        peak = std::max(peak, s.count);
    }
    const int gang = largest_gang(requests);
    const int per_host = std::max(demand.pools[pool].gpus_per_host, gang);
    const Fit need = capacity_search(requests, sizing.card, per_host, gang, std::max(peak, 1),
                                     std::max(4 * peak, 64), options.objective);
    out.gpus_needed = need.gpus;
    out.met = need.met;
    const Fit shown =
        options.gpus ? fit_on(requests, sizing.card, *options.gpus, per_host, options.objective)
                     : need;
    out.interactive = shown.interactive;
    out.batch = shown.batch;
    return out;
}

void add_band(BandFigures& sum, const BandFigures& part) {
    sum.gpus_needed += part.gpus_needed;
    sum.met = sum.met && part.met;
    sum.concurrency.peak += part.concurrency.peak;
    sum.concurrency.p99 += part.concurrency.p99;
    sum.concurrency.p95 += part.concurrency.p95;
    sum.holds += part.holds;
    sum.mps_slowdown = std::max(sum.mps_slowdown, part.mps_slowdown);
    // Waits of several pools: the worst pool's percentiles (each pool queues on its own).
    auto worse = [](Waits& a, const Waits& b) {
        a.count += b.count;
        a.never_started += b.never_started;
        auto mx = [](std::optional<DurationUs>& x, const std::optional<DurationUs>& y) {
            if (y && (!x || *y > *x)) {
                x = y;
            }
        };
        mx(a.p50_us, b.p50_us);
        mx(a.p95_us, b.p95_us);
        mx(a.max_us, b.max_us);
    };
    worse(sum.interactive, part.interactive);
    worse(sum.batch, part.batch);
}

CutFigures cut_figures(Cuts cuts) {
    CutFigures out;
    out.killed = cuts.killed;
    out.resumed = cuts.resumed;
    out.held_saved_us = cuts.held_saved_us;
    if (!cuts.return_us.empty()) {
        std::sort(cuts.return_us.begin(), cuts.return_us.end());
        out.median_return_us = nearest_rank(cuts.return_us, 0.5);
    }
    return out;
}

Savings savings_of(const Demand& demand, const Scenario& s, const audit::Pricing& pricing) {
    Savings out;
    double kwh = 0;
    bool power_known = true;
    for (const PoolScenario& p : s.pools) {
        const Pool& pool = demand.pools[p.pool];
        const int released = std::max(0, pool.gpus - p.relaunch.gpus_needed);
        const int released_drop = std::max(0, pool.gpus - p.drop.gpus_needed);
        const std::int64_t price = audit::price_micros(pricing, pool.model);
        out.gpus_recorded += pool.gpus;
        out.gpus_released += released;
        out.gpus_released_drop += released_drop;
        out.cents_per_month +=
            audit::cost_cents(released * audit::k_hours_per_month * k_us_per_hour, price);
        out.cents_per_month_drop +=
            audit::cost_cents(released_drop * audit::k_hours_per_month * k_us_per_hour, price);
        if (pool.idle_power_w) {
            kwh += released * *pool.idle_power_w * audit::k_hours_per_month / 1000.0;
        } else if (released > 0) {
            power_known = false;
        }
    }
    if (power_known) {
        out.kwh_per_month = kwh;
    }
    return out;
}

} // namespace

PlanResult run_plan(const Demand& demand, const PlanOptions& options) {
    PlanResult out;
    out.options = options;
    out.from = demand.from;
    out.to = demand.to;
    out.pools = demand.pools;
    out.coverage = demand.coverage;
    for (const Unit& u : demand.units) {
        ++out.units;
        out.gangs += u.kind == UnitKind::gang ? 1 : 0;
        out.interactive_units += u.interactive ? 1 : 0;
        out.units_without_readings += u.compute_measured ? 0 : 1;
        out.units_memory_unknown += u.memory_unknown ? 1 : 0;
        out.units_temporal_compute += u.compute_measured && !u.compute_gpm ? 1 : 0;
    }
    const auto timeouts = options.timeouts.empty() ? sweep_timeouts() : options.timeouts;
    const std::vector<Share> shares =
        options.shares.empty() ? std::vector<Share>{Share::exclusive, Share::mig, Share::mps}
                               : options.shares;
    for (const std::optional<DurationUs>& timeout : timeouts) {
        Cuts cuts;
        Cuts ignored;
        const std::vector<Hold> drop = holds_of(demand, timeout, Band::drop, ignored);
        const std::vector<Hold> relaunch = holds_of(demand, timeout, Band::relaunch, cuts);
        for (Share share : shares) {
            Scenario s;
            s.idle_timeout = timeout;
            s.share = share;
            s.cuts = cut_figures(cuts);
            for (std::size_t p = 0; p < demand.pools.size(); ++p) {
                const Sizing sizing = sizing_of(demand.pools[p], share);
                PoolScenario ps;
                ps.pool = p;
                ps.share = sizing.share;
                ps.drop = band_on_pool(demand, drop, p, sizing, options, nullptr);
                ps.relaunch = band_on_pool(demand, relaunch, p, sizing, options,
                                           share == Share::mig ? &ps.mig_profiles : nullptr);
                add_band(s.drop, ps.drop);
                add_band(s.relaunch, ps.relaunch);
                s.pools.push_back(std::move(ps));
            }
            s.savings = savings_of(demand, s, options.pricing);
            out.scenarios.push_back(std::move(s));
        }
    }
    return out;
}

} // namespace gua::plan

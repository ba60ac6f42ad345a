// SPDX-License-Identifier: Apache-2.0
// The plan: every scenario (idle timeout × sharing mode) replayed per card pool, with its band,
// concurrency, waits, capacity and savings; the finished result that the renderers format.
#pragma once

#include "audit/cost.hpp"
#include "plan/capacity.hpp"
#include "plan/holds.hpp"
#include "plan/model.hpp"
#include "plan/share.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::plan {

/// The timeouts of the sensitivity sweep: 15m, 30m, 1h, 2h, 4h, 8h and none (nullopt).
std::vector<std::optional<DurationUs>> sweep_timeouts();

/// What to replay.
struct PlanOptions {
    std::vector<std::optional<DurationUs>> timeouts; ///< empty: the sweep
    std::vector<Share> shares;                       ///< empty: all three
    std::optional<int> gpus;                         ///< --gpus: also replay on N cards a pool
    Objective objective;
    audit::Pricing pricing;
};

/// One band's figures of a scenario on one pool (or summed over pools).
struct BandFigures {
    int gpus_needed = 0;
    bool met = true; ///< the objective was met within the search limit
    Concurrency concurrency;
    Waits interactive; ///< at gpus_needed (or --gpus)
    Waits batch;
    std::int64_t holds = 0;
    double mps_slowdown = 1.0; ///< time-weighted stretch of co-runners (MPS; 1 otherwise)
};

/// The sessions a timeout cuts (the same in both bands).
struct CutFigures {
    std::int64_t killed = 0;
    std::int64_t resumed = 0;
    std::optional<DurationUs> median_return_us;
    DurationUs held_saved_us = 0;
};

/// What releasing cards is worth: the recorded cards less those needed (relaunch band).
struct Savings {
    int gpus_recorded = 0;
    int gpus_released = 0;
    int gpus_released_drop = 0;
    std::int64_t cents_per_month = 0; ///< at [pricing] per model, 30-day months
    std::int64_t cents_per_month_drop = 0;
    std::optional<double> kwh_per_month; ///< released cards at their recorded idle power
};

/// One pool's part of a scenario.
struct PoolScenario {
    std::size_t pool = 0;
    Share share = Share::exclusive; ///< exclusive where the model has no MIG table
    BandFigures drop;
    BandFigures relaunch;
    std::map<std::string, std::int64_t> mig_profiles; ///< MIG: units per profile
};

/// One scenario: a timeout and a sharing mode.
struct Scenario {
    std::optional<DurationUs> idle_timeout; ///< nullopt: no policy
    Share share = Share::exclusive;
    BandFigures drop;     ///< summed over pools
    BandFigures relaunch; ///< summed over pools (the figures `gpus_needed` etc. report)
    CutFigures cuts;
    Savings savings;
    std::vector<PoolScenario> pools;
};

/// The finished plan.
struct PlanResult {
    PlanOptions options;
    TimeUs from = 0;
    TimeUs to = 0;
    std::vector<Pool> pools;
    Coverage coverage;
    std::int64_t units = 0;
    std::int64_t gangs = 0;
    std::int64_t interactive_units = 0;
    std::int64_t units_without_readings = 0; ///< compute not measured per process
    std::int64_t units_memory_unknown = 0;
    std::int64_t units_temporal_compute = 0; ///< compute from the SM % (an upper bound)
    std::vector<Scenario> scenarios;
};

/// Replays `demand` under every scenario of `options`.
PlanResult run_plan(const Demand& demand, const PlanOptions& options);

/// The requests of `holds` on pool `pool` under `sizing` (the MIG profile of each unit counted
/// in `profiles` when given).
std::vector<Request> requests_of(const Demand& demand, const std::vector<Hold>& holds,
                                 std::size_t pool, const Sizing& sizing,
                                 std::map<std::string, std::int64_t>* profiles = nullptr);

} // namespace gua::plan

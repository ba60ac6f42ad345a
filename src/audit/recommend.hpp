// SPDX-License-Identifier: Apache-2.0
// The recommender: rules that turn measured waste pools and card profiles into remedies in the
// field's own vocabulary, each tied to its evidence, with savings combined without double counting.
#pragma once

#include "audit/classify.hpp"
#include "audit/cost.hpp"
#include "audit/pools.hpp"
#include "audit/savings.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit {

/// One card as the rules see it.
struct CardEvidence {
    int index = 0;                                ///< driver index, as shown in the report
    std::string model;                            ///< e.g. "NVIDIA H100 80GB HBM3"
    std::optional<std::int64_t> memory_total_mib; ///< nullopt: unknown
    std::int64_t micros_per_gpu_hour = 0;         ///< its price
    StateTimes states;
    PoolTimes pools{};
    CardProfile profile;
};

/// One identity (user or team) with its attributed time per card (indexes RecommendInput::cards).
struct IdentityEvidence {
    std::string name;
    std::vector<double> active_us;
    std::vector<double> idle_held_us;
};

/// One allocation (Slurm job, pod, reservation) with its time per card: `cards` indexes
/// RecommendInput::cards, the duration vectors run parallel to it.
struct AllocationEvidence {
    std::string kind;  ///< "slurm-job", "pod" or "reservation"
    std::string id;    ///< job id, "<namespace>/<pod>", reservation name
    std::string owner; ///< the owner §4 names (user or namespace)
    std::vector<std::size_t> cards;
    std::vector<DurationUs> allocated_us;
    std::vector<DurationUs> unused_us; ///< allocated-unused
};

/// Everything the rules read. Pure data; the report builder fills it from a WindowAccumulator.
struct RecommendInput {
    std::vector<CardEvidence> cards;
    std::vector<IdentityEvidence> identities;
    std::vector<AllocationEvidence> allocations;         ///< empty without an allocation source
    std::array<std::array<StateTimes, 24>, 7> heatmap{}; ///< [weekday][hour], weekday 0 = Sunday
    std::string time_zone = "UTC";                       ///< of the heatmap and office hours
    DurationUs recorded_us = 0;                          ///< wall time with data in the window
    double spot_discount = 0;                            ///< fraction off for spot capacity
};

/// One recommendation: what to do, why (measured evidence), and what it is worth.
struct Recommendation {
    std::string id;                      ///< stable rule id, e.g. "idle-culling"
    std::string title;                   ///< one line, imperative
    std::string remedy;                  ///< the remediation, in the tools' own terms
    std::vector<std::string> evidence;   ///< measured facts with units, one sentence each
    std::vector<int> gpus;               ///< driver indices of the cards it concerns
    std::vector<std::string> identities; ///< identities involved, most time first
    std::vector<std::string> hours;      ///< heatmap cells, e.g. "Sat 03:00"
    std::string group;                   ///< overlap group: remedies for the same waste
    std::vector<Pool> pools;             ///< the waste pools it addresses
    std::vector<Claim> claims;           ///< its claims (card = index into the input cards)
    double addressed_gpu_hours = 0;      ///< GPU-hours of the pools it addresses
    std::int64_t addressed_cents = 0;    ///< their cost in the window
    double recovery = 0;                 ///< estimated share of the addressed waste won back
    double fraction = 0;                 ///< f: share of the baseline it saves by itself
    double rate_reduction = 0;           ///< s: price cut on remaining waste (spot), else 0
};

/// The recommender's result.
struct Advice {
    std::vector<Recommendation> recommendations; ///< by fraction descending, then id
    Combination combination;                     ///< baseline and savings in window micro-units
    std::array<double, k_pool_count> pool_gpu_hours{};
    std::array<std::int64_t, k_pool_count> pool_cents{}; ///< each pool's cost in the window
    std::array<double, k_pool_count> pool_micros{};      ///< the same unrounded, micro-units
    std::int64_t baseline_cents = 0;                     ///< sum of pool_cents
    RunRate baseline_rate;                               ///< the baseline at the window's rates
    RunRate savings_rate; ///< combination.total × the baseline rate, rounded once
};

/// Runs every rule on `input` and combines the savings of those that fire.
Advice recommend(const RecommendInput& input);

} // namespace gua::audit

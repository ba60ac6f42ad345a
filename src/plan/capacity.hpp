// SPDX-License-Identifier: Apache-2.0
// Answers from replays: cards in use over the recorded time (peak, p99, p95), wait percentiles,
// and the smallest number of cards whose waits meet the objective.
#pragma once

#include "plan/place.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gua::plan {

/// Cards in use, weighted by time, over the recorded time only (no data is never idle).
struct Concurrency {
    int peak = 0;
    int p99 = 0;
    int p95 = 0;
    friend bool operator==(const Concurrency&, const Concurrency&) = default;
};

/// The time-weighted peak, 99th and 95th percentile of `steps` within `recorded` (merged
/// intervals in time order; Phase::active unused): the smallest count c such that the time at
/// or below c is at least that share of the recorded time.
Concurrency concurrency_of(const std::vector<Step>& steps, const std::vector<Phase>& recorded);

/// The wait objective: the 95th percentile (nearest rank) of each class's waits at or below.
struct Objective {
    DurationUs interactive_us = k_us_per_minute;
    DurationUs batch_us = k_us_per_hour;
};

/// Wait percentiles of one class of requests (nearest rank); nullopt when none started.
struct Waits {
    std::int64_t count = 0;
    std::optional<DurationUs> p50_us;
    std::optional<DurationUs> p95_us;
    std::optional<DurationUs> max_us;
    std::int64_t never_started = 0;
};

/// The waits of a replay on a given number of cards.
struct Fit {
    int gpus = 0;
    bool met = false; ///< every request started and both p95s meet the objective
    Waits interactive;
    Waits batch;
};

/// Nearest-rank percentile `q` (0–1] of `sorted` (ascending, non-empty).
DurationUs nearest_rank(const std::vector<DurationUs>& sorted, double q);

/// Replays `requests` on `gpus` cards and measures the waits against `objective`.
Fit fit_on(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
           const Objective& objective);

/// The smallest card count in [lo, ∞) whose replay meets `objective` (searched by halving
/// between lo and a count that meets it, from `hint` doubling up to `limit`), with its waits;
/// `met` false when even `limit` cards do not meet it.
Fit capacity_search(const std::vector<Request>& requests, Capacity card, int per_host, int lo,
                    int hint, int limit, const Objective& objective);

} // namespace gua::plan

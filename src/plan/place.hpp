// SPDX-License-Identifier: Apache-2.0
// Online placement: requests placed on arrival (best fit, gangs whole on one host, no
// migration) on N cards with a strict FIFO queue, or on as many cards as needed.
#pragma once

#include "plan/share.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gua::plan {

/// One hold to place: `gpus` cards on one host, each needing `need` of a card's capacity.
struct Request {
    TimeUs arrival = 0;
    DurationUs duration = 0;
    int gpus = 1;
    Capacity need;
    bool interactive = false;
    /// Its compute demand on a card it shares through MPS, percent: its compute share while
    /// active × the active share of the hold (the replay keeps no phase order within a hold, so
    /// the activity is taken as spread evenly). 0 where co-runners do not slow each other
    /// (exclusive, MIG, a gang's whole cards).
    double load_pct = 0;
};

/// A step of a count over time: `count` from `t` until the next step.
struct Step {
    TimeUs t = 0;
    int count = 0;
    friend bool operator==(const Step&, const Step&) = default;
};

/// The waits of one replay, per request (in request order); nullopt entries never started
/// (a gang larger than a host, or the replay stopped early).
struct Replay {
    std::vector<std::optional<DurationUs>> waits;
    bool stopped = false; ///< `give_up` said the objective was already missed
};

/// Replays `requests` (sorted by arrival) on `gpus` cards of capacity `card`, `per_host` cards
/// to a host. Strict FIFO: while the head of the queue does not fit, nothing behind it starts.
/// Co-runners of a card whose loads add up to S > 100 % each run at 100/S of their own pace
/// (work conserved): a request's remaining time stretches while they share, so it ends later.
/// `give_up(interactive)` is asked after each wait above zero is recorded, with the request's
/// class and its wait; when it returns true the replay stops.
Replay replay(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
              const std::function<bool(bool, DurationUs)>& give_up);

/// The cards in use over time when every request starts on arrival: best fit onto the cards
/// already in use, a new card when none fits; co-runners stretched as in replay(). `run_us`,
/// when given, receives Σ of the requests' run times as replayed (stretched) and `solo_us`
/// their recorded durations: the MPS slowdown is their ratio.
std::vector<Step> unbounded(const std::vector<Request>& requests, Capacity card,
                            double* run_us = nullptr, double* solo_us = nullptr);

/// The cards with at least one unit present over time on the recorded placement (no policy,
/// exclusive): what the replay must reproduce of the recording, tick by tick.
std::vector<Step> recorded_placement(const Demand& demand);

} // namespace gua::plan

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
    double compute_pct = 0; ///< mean compute share while it runs (MPS slowdown)
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
/// `give_up(interactive)` is asked after each wait above zero is recorded, with the request's
/// class and its wait; when it returns true the replay stops.
Replay replay(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
              const std::function<bool(bool, DurationUs)>& give_up);

/// The cards in use over time when every request starts on arrival: best fit onto the cards
/// already in use, a new card when none fits. `slowdown_us`, when given, receives Σ over
/// requests of time × (Σ compute of its card's co-runners / 100, at least 1) and `run_us` the
/// requests' time, for the MPS stretch.
std::vector<Step> unbounded(const std::vector<Request>& requests, Capacity card,
                            double* slowdown_us = nullptr, double* run_us = nullptr);

/// The cards with at least one unit present over time on the recorded placement (no policy,
/// exclusive): what the replay must reproduce of the recording, tick by tick.
std::vector<Step> recorded_placement(const Demand& demand);

} // namespace gua::plan

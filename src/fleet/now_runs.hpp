// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the fleet view on a card's state counters (gua_gpu_seconds_total by state,
// and a user's gua_gpu_user_seconds_total) read at common scrape times: which state the newest
// tick had, and how many seconds of a state the counters gained since the card last had another.
#pragma once

#include "core/time.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {

/// Counters of one card (state → value) at the times any of them was sampled, oldest first. A
/// counter without a sample at a time holds its previous value, or 0 before its first sample
/// (a series gua creates when its first second is counted).
struct CounterTimeline {
    std::vector<TimeUs> times;
    std::map<std::string, std::vector<double>> values; ///< per state, one value per time
};

/// Builds the timeline of `series` (state → its samples, oldest first).
CounterTimeline
align_counters(const std::map<std::string, std::vector<std::pair<TimeUs, double>>>& series);

/// Values of `samples` at `times` as align_counters fills them.
std::vector<double> values_at(const std::vector<TimeUs>& times,
                              const std::vector<std::pair<TimeUs, double>>& samples);

/// The index i of the newest interval (times[i-1], times[i]] in which the card's counters grew:
/// the newest tick seen. nullopt when none grew.
std::optional<std::size_t> newest_tick(const CounterTimeline& t);

/// The state that gained the most seconds in interval i (ties: the first in state order).
std::string state_of_interval(const CounterTimeline& t, std::size_t i);

/// A run of one state back from the newest time.
struct StateRun {
    double seconds = 0;    ///< the state's counter gain since the run began
    bool at_least = false; ///< reached the oldest time read (or a counter reset): it may be longer
    std::size_t base = 0;  ///< index of the time the gain is counted from
};

/// How many seconds of `state` the card counted since it last counted any other state: walking
/// back from the newest time, the run ends at the first interval in which another state grew
/// (the state's gain in that interval counts: the other state came first when the interval holds
/// one change) or a counter went down (a new database). Exact to the tick when each interval
/// holds at most one change of state.
StateRun state_run(const CounterTimeline& t, const std::string& state);

/// The run of a user idle-holding the card: `user_idle` is the user's idle-held counter at t's
/// times. Walking back like state_run, it also ends at an interval in which the card ticked but
/// the user gained no idle-held time (the user came after it). Seconds are the card's idle-held
/// gain since then.
StateRun holder_run(const CounterTimeline& t, const std::vector<double>& user_idle);

} // namespace gua::report

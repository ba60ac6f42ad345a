// SPDX-License-Identifier: Apache-2.0
// State runs of the fleet view on aligned counter samples (fleet/now_runs.hpp).
#include "fleet/now_runs.hpp"

#include <algorithm>
#include <set>

namespace gua::report {

namespace {

/// Counter growth below this is rounding (the daemon counts microseconds).
constexpr double k_run_epsilon_s = 1e-3;

double others_at(const CounterTimeline& t, const std::string& state, std::size_t i) {
    double sum = 0;
    for (const auto& [name, v] : t.values) {
        if (name != state) {
            sum += v[i];
        }
    }
    return sum;
}

bool any_went_down(const CounterTimeline& t, std::size_t i) {
    return std::any_of(t.values.begin(), t.values.end(), [&](const auto& entry) {
        return entry.second[i] + k_run_epsilon_s < entry.second[i - 1];
    });
}

double total_at(const CounterTimeline& t, std::size_t i) {
    double sum = 0;
    for (const auto& entry : t.values) {
        sum += entry.second[i];
    }
    return sum;
}

const std::vector<double>* values_of(const CounterTimeline& t, const std::string& state) {
    const auto it = t.values.find(state);
    return it == t.values.end() ? nullptr : &it->second;
}

} // namespace

std::vector<double> values_at(const std::vector<TimeUs>& times,
                              const std::vector<std::pair<TimeUs, double>>& samples) {
    std::vector<double> out(times.size(), 0.0);
    std::size_t next = 0;
    double value = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
        while (next < samples.size() && samples[next].first <= times[i]) {
            value = samples[next++].second;
        }
        out[i] = value;
    }
    return out;
}

CounterTimeline
align_counters(const std::map<std::string, std::vector<std::pair<TimeUs, double>>>& series) {
    std::set<TimeUs> times;
    for (const auto& entry : series) {
        for (const auto& sample : entry.second) {
            times.insert(sample.first);
        }
    }
    CounterTimeline t;
    t.times.assign(times.begin(), times.end());
    for (const auto& [state, samples] : series) {
        t.values[state] = values_at(t.times, samples);
    }
    return t;
}

std::optional<std::size_t> newest_tick(const CounterTimeline& t) {
    for (std::size_t i = t.times.size(); i-- > 1;) {
        if (total_at(t, i) > total_at(t, i - 1) + k_run_epsilon_s && !any_went_down(t, i)) {
            return i;
        }
    }
    return std::nullopt;
}

std::string state_of_interval(const CounterTimeline& t, std::size_t i) {
    std::string best;
    double most = k_run_epsilon_s;
    for (const auto& [state, v] : t.values) {
        if (v[i] - v[i - 1] > most) {
            most = v[i] - v[i - 1];
            best = state;
        }
    }
    return best;
}

StateRun state_run(const CounterTimeline& t, const std::string& state) {
    StateRun run;
    const std::vector<double>* mine = values_of(t, state);
    if (mine == nullptr || t.times.empty()) {
        return run;
    }
    const std::size_t last = t.times.size() - 1;
    std::size_t i = last;
    for (; i > 0; --i) {
        if (any_went_down(t, i)) {
            run.at_least = true;
            break;
        }
        if (others_at(t, state, i) > others_at(t, state, i - 1) + k_run_epsilon_s) {
            --i;
            break;
        }
    }
    run.at_least = run.at_least || i == 0;
    run.base = i;
    run.seconds = std::max((*mine)[last] - (*mine)[i], 0.0);
    return run;
}

StateRun holder_run(const CounterTimeline& t, const std::vector<double>& user_idle) {
    const std::string idle = "idle_held";
    StateRun run;
    const std::vector<double>* card_idle = values_of(t, idle);
    if (card_idle == nullptr || t.times.empty() || user_idle.size() != t.times.size()) {
        return run;
    }
    const std::size_t last = t.times.size() - 1;
    std::size_t i = last;
    for (; i > 0; --i) {
        if (any_went_down(t, i) || user_idle[i] + k_run_epsilon_s < user_idle[i - 1]) {
            run.at_least = true;
            break;
        }
        if (others_at(t, idle, i) > others_at(t, idle, i - 1) + k_run_epsilon_s) {
            --i;
            break;
        }
        const bool ticked = total_at(t, i) > total_at(t, i - 1) + k_run_epsilon_s;
        if (ticked && user_idle[i] <= user_idle[i - 1] + k_run_epsilon_s) {
            break; // the card ticked without this user: the user came after t.times[i]
        }
    }
    run.at_least = run.at_least || i == 0;
    run.base = i;
    run.seconds = std::max((*card_idle)[last] - (*card_idle)[i], 0.0);
    return run;
}

} // namespace gua::report

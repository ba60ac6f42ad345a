// SPDX-License-Identifier: Apache-2.0
// What the phases of read_counters() (counters.cpp, last_values.cpp)
// share: each host's values at each lookup time, and the sums being assembled.
#pragma once

#include "prometheus/counters.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gua::report::counters_parts {

/// A lookup's guess of series per host (lookups hold one point per series).
inline constexpr std::int64_t k_lookup_series_guess = 1000;

/// Values of one family at one lookup: series key → value.
using Values = std::map<std::string, double>;

/// What one host showed at one lookup time.
struct HostAt {
    std::optional<double> start_time;
    std::optional<double> sample_time;      ///< when the values were scraped (Unix seconds)
    std::map<std::string, Values> counters; ///< by family name
};

/// The results being assembled, shared by the jobs of a phase (under the mutex).
struct Assembly {
    std::mutex mutex;
    std::map<std::string, std::map<TimeUs, HostAt>> at; ///< host → lookup time → what it showed
    std::map<std::string, std::map<std::string, PromSample>> sums;   ///< family → key → sum
    std::map<std::string, std::map<std::string, PromSample>> gauges; ///< family → key → max
};

inline bool is_pod_series(const PromLabels& labels) {
    for (const char* name : {"namespace", "pod", "container"}) {
        if (!prom_label(labels, name).empty()) {
            return true;
        }
    }
    return false;
}

/// `labels` reduced to the host label and `keep`.
inline PromLabels project(const PromLabels& labels, const std::string& host_label,
                          const std::vector<std::string>& keep) {
    PromLabels out;
    if (const auto it = labels.find(host_label); it != labels.end()) {
        out.insert(*it);
    }
    for (const std::string& k : keep) {
        if (const auto it = labels.find(k); it != labels.end()) {
            out.insert(*it);
        }
    }
    return out;
}

inline std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : sep) + p;
    }
    return out;
}

/// Adds a counter series of family `name` (labels as answered) to `h`, and makes sure the sum of
/// its projected series exists; pod series are read on their own (increase()), not here. The
/// caller holds `as.mutex`.
inline void add_counter(Assembly& as, HostAt& h, const CounterQuery& q, const std::string& name,
                        const PromLabels& labels, double v) {
    for (const CounterFamily& f : q.counters) {
        if (f.name == name && !(f.pod_series && is_pod_series(labels))) {
            const PromLabels key = project(labels, q.host_label, f.labels);
            const std::string k = series_key(key);
            h.counters[name][k] += v;
            as.sums[name].try_emplace(k, PromSample{key, 0});
        }
    }
}

/// For each host of `bounds_of` (its chunk bounds) that went away for good inside a chunk —
/// seen at the chunk's start, at no later bound — looks up its last values in that chunk with
/// its start time then (last_over_time). When that start time is the one at the chunk's start,
/// its counters simply stopped there: those values stand in `as.at` for the chunk's end and
/// every later bound, so that end − start is each chunk's increase (increase() would
/// extrapolate past the last sample).
void read_last_values(PrometheusClient& prom, const CounterQuery& q, DurationUs sample_interval_us,
                      const std::map<std::string, std::vector<TimeUs>>& bounds_of, Assembly& as);

} // namespace gua::report::counters_parts

// SPDX-License-Identifier: Apache-2.0
// Phase 2 of read_counters(): hosts whose daemon restarted or was not seen at an edge, cut into
// chunks at the days with a restart, and whether counters carried over a restart
// (counter_reader.hpp).
#include "prometheus/counter_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace gua::report::counters_parts {

namespace {

constexpr DurationUs k_chunk = k_us_per_day;

/// The latest start time a daemon's gauge can mean, in seconds since the epoch (the bound of
/// a sample time in answer.cpp): a larger value is a broken server's.
constexpr double k_max_start_time_s = 1e11;

/// A start-time gauge's value in µs, held within [0, k_max_start_time_s] (NaN: 0) before it is
/// converted: a server's number is not trusted to fit a TimeUs.
TimeUs start_time_us(double seconds) {
    const double s = seconds >= 0 ? std::min(seconds, k_max_start_time_s) : 0.0;
    return static_cast<TimeUs>(std::llround(s * 1e6));
}

} // namespace

std::optional<double> CounterReader::started(const std::string& host, TimeUs t) const {
    const auto h = m_as.at.find(host);
    if (h == m_as.at.end()) {
        return std::nullopt;
    }
    const auto it = h->second.find(t);
    return it != h->second.end() ? it->second.start_time : std::nullopt;
}

/// Each unstable host's start time at every day boundary inside the window (one series a host:
/// cheap lookups), into m_start_at.
void CounterReader::read_day_starts(const std::vector<std::string>& unstable,
                                    const std::vector<TimeUs>& days) {
    Jobs jobs;
    const FleetShape shape{unstable.size(), 1, m_out.sample_interval_us};
    for (std::size_t i = 1; i + 1 < days.size(); ++i) {
        for (const PlannedRequest& r : plan_lookup(shape, days[i], m_q.limits)) {
            const std::string q =
                fmt::format("max by ({}) ({}{{{}}})", m_q.host_label, m_q.start_time_gauge,
                            host_selector(unstable, r.first_host, r.hosts));
            jobs.emplace_back([this, q, t = days[i]](PrometheusClient& client) {
                client.query_each(q, t, [&](PromLabels& labels, std::optional<double> v) {
                    if (v) {
                        const std::lock_guard<std::mutex> lock(m_as.mutex);
                        m_start_at[prom_label(labels, m_q.host_label)][t] = *v;
                    }
                });
            });
        }
    }
    m_prom.parallel(jobs, m_q.limits.concurrency);
}

/// An unstable host's chunks: runs of days it ran throughout, cut at the days with a restart
/// (m_bounds_of), each bound a lookup in `wanted`. A chunk in which the daemon restarted is read
/// at its ends too if its counters carried over the restart (through the daemon's database):
/// checked by a lookup just after the restart (m_probe_of), when the new daemon's counters must
/// be at least what they were at the chunk's start (a new database starts them over).
void CounterReader::cut_chunks(const std::string& host, const std::vector<TimeUs>& days,
                               std::map<TimeUs, std::vector<std::string>>& wanted) {
    const auto start_time = [&](TimeUs t) {
        if (t == m_q.from || t == m_q.to) {
            return started(host, t);
        }
        const auto it = m_start_at[host].find(t);
        return it != m_start_at[host].end() ? std::optional<double>(it->second) : std::nullopt;
    };
    const auto ran = [&](std::size_t day) { // days[day] .. days[day + 1]
        const std::optional<double> a = start_time(days[day]);
        const std::optional<double> b = start_time(days[day + 1]);
        return a && b && *a == *b;
    };
    std::vector<TimeUs>& bounds = m_bounds_of[host];
    bounds.push_back(m_q.from);
    for (std::size_t k = 1; k + 1 < days.size(); ++k) {
        if (!ran(k - 1) || !ran(k)) {
            bounds.push_back(days[k]);
            wanted[days[k]].push_back(host);
        }
    }
    bounds.push_back(m_q.to);
    for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
        const std::optional<double> sa = start_time(bounds[c]);
        const std::optional<double> sb = start_time(bounds[c + 1]);
        if (sa && sb && *sa != *sb) {
            const TimeUs restarted = start_time_us(*sb);
            const TimeUs probe =
                std::clamp(restarted + 2 * m_out.sample_interval_us, bounds[c] + 1, bounds[c + 1]);
            m_probe_of[host][bounds[c]] = probe;
            wanted[probe].push_back(host);
        }
    }
}

/// Phase 2: hosts whose daemon did not run throughout (or was not seen at an edge). Their start
/// time at every day boundary tells the days it ran throughout; a run of such days is one chunk,
/// looked up in full at its two ends only. A host that went away for good: its counters stay
/// where they stopped.
void CounterReader::read_unstable_hosts() {
    std::vector<std::string>& unstable = m_out.unstable;
    for (const std::string& host : m_out.hosts) {
        const std::optional<double> sa = started(host, m_q.from);
        const std::optional<double> sb = started(host, m_q.to);
        if (!(sa && sb && *sa == *sb)) {
            unstable.push_back(host);
        }
        if (!sb) {
            m_out.gone_at_end.push_back(host);
        }
    }
    const std::vector<TimeUs> days = chunk_bounds(m_q.from, m_q.to, k_chunk);
    if (!unstable.empty() && days.size() > 2) {
        read_day_starts(unstable, days);
    }
    std::map<TimeUs, std::vector<std::string>> wanted; // lookup time → hosts
    for (const std::string& host : unstable) {
        cut_chunks(host, days, wanted);
    }
    Jobs jobs;
    for (const auto& [t, hosts] : wanted) {
        lookups(hosts, t, jobs);
    }
    m_prom.parallel(jobs, m_q.limits.concurrency);
    read_last_values(m_prom, m_q, m_out.sample_interval_us, m_bounds_of, m_as);
}

/// False when a counter of `host` at `probe` is lower than (or missing from) what it was at
/// `a`: the daemon started over on a new database.
bool CounterReader::carried_over(const std::string& host, TimeUs a, TimeUs probe) {
    const auto& times = m_as.at[host];
    const auto before = times.find(a);
    const auto after = times.find(probe);
    if (before == times.end() || after == times.end()) {
        return false;
    }
    for (const auto& [name, values] : before->second.counters) {
        const auto family = after->second.counters.find(name);
        for (const auto& [key, v] : values) {
            if (family == after->second.counters.end()) {
                return false;
            }
            const auto it = family->second.find(key);
            if (it == family->second.end() || it->second < v) {
                return false;
            }
        }
    }
    return true;
}

} // namespace gua::report::counters_parts

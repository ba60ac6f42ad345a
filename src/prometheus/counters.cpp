// SPDX-License-Identifier: Apache-2.0
// Lookups at chunk edges, telescoping where a daemon ran throughout, increase() elsewhere: the
// hosts, the sample interval, phase 3 (telescoping) and the totals. The requests are in
// counter_lookups.cpp, restarted hosts in counter_restarts.cpp, the per-step sums and range reads
// in steps.cpp, the last values of hosts that went away in last_values.cpp.
#include "prometheus/counters.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "prometheus/answer.hpp"
#include "prometheus/counter_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gua::report {

using counters_parts::Assembly;

namespace {

constexpr DurationUs k_default_interval = 15 * k_us_per_second;
/// Slack on the bound of an appeared series: a tick's counting can run ahead of the wall clock.
constexpr double k_new_series_slack_s = 120;

} // namespace

DurationUs counter_tolerance_us(DurationUs sample_interval_us) {
    return 2 * sample_interval_us + 2 * k_us_per_minute;
}

namespace {

/// Refuses the totals when a series counted more than its family's max_rate allows over the
/// window: a broken or hostile server, never a figure to report.
void check_rates(const Assembly& as, const std::vector<CounterFamily>& counters,
                 const std::string& server, TimeUs from, TimeUs to, DurationUs interval) {
    const DurationUs allowed = to - from + counter_tolerance_us(interval);
    for (const CounterFamily& f : counters) {
        const auto sums = as.sums.find(f.name);
        if (f.max_rate <= 0 || sums == as.sums.end()) {
            continue;
        }
        const double bound = f.max_rate * static_cast<double>(allowed) / 1e6;
        for (const auto& [key, s] : sums->second) {
            if (!(s.value <= bound)) {
                PromLabels labels = s.labels;
                labels["__name__"] = f.name;
                throw Fatal(fmt::format(
                    "refused the answers of Prometheus at {}: series {}: an increase of {:.6g} "
                    "over a window of {}, more than {:g} a second allows (at most {:.6g}, with "
                    "a tolerance of {})",
                    server, describe_series(labels), s.value, format_duration(to - from),
                    f.max_rate, bound, format_duration(counter_tolerance_us(interval))));
            }
        }
    }
}

} // namespace

std::string series_key(const PromLabels& labels) {
    std::string key;
    for (const auto& [k, v] : labels) {
        key += k + '\x1f' + v + '\x1e';
    }
    return key;
}

std::optional<std::map<std::string, double>> telescope(const std::map<std::string, double>& start,
                                                       const std::map<std::string, double>& end,
                                                       double max_new) {
    std::map<std::string, double> out;
    for (const auto& [key, v0] : start) {
        if (!end.contains(key)) {
            return std::nullopt; // the series ended: its last value is not at the edge
        }
    }
    for (const auto& [key, v1] : end) {
        const auto it = start.find(key);
        const double d = it != start.end() ? v1 - it->second : v1;
        if (d < 0 || (it == start.end() && max_new > 0 && v1 > max_new)) {
            return std::nullopt;
        }
        out[key] = d;
    }
    return out;
}

namespace counters_parts {

/// The hosts with a series of any family in the window, and the matcher and grouping of every
/// lookup. False when there are none.
bool CounterReader::find_hosts() {
    std::vector<std::string> names{m_q.start_time_gauge};
    std::set<std::string> union_labels{m_q.host_label};
    for (const CounterFamily& f : m_q.counters) {
        names.push_back(f.name);
        union_labels.insert(f.labels.begin(), f.labels.end());
        if (f.pod_series) {
            union_labels.insert({"namespace", "pod", "container"});
        }
    }
    for (const GaugeFamily& g : m_q.gauges) {
        names.push_back(g.name);
        union_labels.insert(g.labels.begin(), g.labels.end());
    }
    m_name_matcher = "__name__=~\"" + join(names, "|") + "\"";
    std::vector<std::string> by(union_labels.begin(), union_labels.end());
    by.insert(by.begin(), "__name__");
    m_by_list = join(by, ", ");
    m_out.hosts = m_prom.label_values(m_q.host_label, {"{" + m_name_matcher + "}"},
                                      m_q.from - k_lookback, m_q.to);
    std::sort(m_out.hosts.begin(), m_out.hosts.end());
    m_out.hosts.erase(std::unique(m_out.hosts.begin(), m_out.hosts.end()), m_out.hosts.end());
    return !m_out.hosts.empty();
}

/// The interval between samples, from the daemons' start-time gauge over the last hour.
void CounterReader::measure_interval() {
    const DurationUs last_hour = std::min<DurationUs>(k_us_per_hour, m_q.to - m_q.from);
    m_out.sample_interval_us = k_default_interval;
    for (const PromSample& s : m_prom.query(
             fmt::format("max(count_over_time({}{}))", m_q.start_time_gauge, prom_range(last_hour)),
             m_q.to)) {
        if (s.value >= 2) {
            m_out.sample_interval_us = std::max<DurationUs>(
                static_cast<DurationUs>(static_cast<double>(last_hour) / s.value), k_us_per_ms);
        }
    }
}

/// The most series `host` had at one lookup; notes each family's series per host, and the host
/// in m_out.went_down when a counter was lower at a lookup than at the one before.
std::int64_t CounterReader::note_series(const std::string& host) {
    std::int64_t series = 0;
    std::map<std::string, double> latest; // family + series key → value at the last lookup
    bool went_down = false;
    for (const auto& [t, h] : m_as.at[host]) {
        std::int64_t n = 0;
        for (const auto& [name, values] : h.counters) {
            n += static_cast<std::int64_t>(values.size());
            m_out.series_per_host[name] =
                std::max(m_out.series_per_host[name], static_cast<std::int64_t>(values.size()));
            for (const auto& [key, v] : values) {
                auto [it, fresh] = latest.try_emplace(name + '\x1d' + key, v);
                went_down = went_down || (!fresh && v < it->second);
                it->second = v;
            }
        }
        series = std::max(series, n);
    }
    if (went_down) {
        m_out.went_down.push_back(host);
    }
    return series;
}

/// Adds the increase of `host`'s chunk [a, b] from its values at the two ends (across a restart
/// too when the counters carried over it: end − start is then still the increase). False when
/// the chunk must be read in full.
bool CounterReader::telescope_chunk(const std::string& host, TimeUs a, TimeUs b) {
    if (const auto probes = m_probe_of.find(host); probes != m_probe_of.end()) {
        const auto probe = probes->second.find(a);
        if (probe != probes->second.end() && !carried_over(host, a, probe->second)) {
            return false;
        }
    }
    std::map<std::string, std::map<std::string, double>> increments;
    for (const CounterFamily& f : m_q.counters) {
        const double max_new =
            f.max_rate > 0 ? f.max_rate * (static_cast<double>(b - a) / 1e6 + k_new_series_slack_s)
                           : 0;
        std::optional<std::map<std::string, double>> d = telescope(
            m_as.at[host][a].counters[f.name], m_as.at[host][b].counters[f.name], max_new);
        if (!d) {
            return false;
        }
        increments[f.name] = std::move(*d);
    }
    for (const auto& [name, values] : increments) {
        for (const auto& [key, d] : values) {
            m_as.sums[name].at(key).value += d;
        }
    }
    return true;
}

/// Phase 3: telescope each host's chunks; read the others in full.
void CounterReader::telescope_hosts() {
    std::map<std::pair<TimeUs, TimeUs>, std::vector<std::string>> full; // chunk → hosts
    std::int64_t most_series = 1;
    for (const std::string& host : m_out.hosts) {
        most_series = std::max(most_series, note_series(host));
        const auto own = m_bounds_of.find(host);
        const std::vector<TimeUs> bounds =
            own != m_bounds_of.end() ? own->second : std::vector{m_q.from, m_q.to};
        for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
            if (!telescope_chunk(host, bounds[c], bounds[c + 1])) {
                full[{bounds[c], bounds[c + 1]}].push_back(host);
            }
        }
    }
    Jobs jobs;
    for (const auto& [chunk, hosts] : full) {
        m_out.full_reads += hosts.size();
        scans(hosts, chunk.first, chunk.second, false, most_series, jobs);
    }
    m_prom.parallel(jobs, m_q.limits.concurrency);
}

CounterTotals CounterReader::collect() {
    for (auto& [name, sums] : m_as.sums) {
        for (auto& [key, s] : sums) {
            m_out.increase[name].push_back(std::move(s));
        }
    }
    for (auto& [name, values] : m_as.gauges) {
        for (auto& [key, s] : values) {
            m_out.gauge[name].push_back(std::move(s));
        }
    }
    return std::move(m_out);
}

CounterTotals CounterReader::read() {
    if (!find_hosts()) {
        return std::move(m_out);
    }
    measure_interval();
    read_edges();
    read_unstable_hosts();
    telescope_hosts();
    check_rates(m_as, m_q.counters, m_prom.url(), m_q.from, m_q.to, m_out.sample_interval_us);
    return collect();
}

} // namespace counters_parts

CounterTotals read_counters(PrometheusClient& prom, const CounterQuery& query) {
    return counters_parts::CounterReader(prom, query).read();
}

} // namespace gua::report

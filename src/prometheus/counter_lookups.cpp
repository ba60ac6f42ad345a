// SPDX-License-Identifier: Apache-2.0
// The requests of read_counters(): lookups of every family at an instant, increase() scans over
// a range, and phase 1, every host at the window's edges (counter_reader.hpp).
#include "prometheus/answer.hpp"
#include "prometheus/counter_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace gua::report::counters_parts {

namespace {

/// The label that marks the scrape times of a lookup's answer (`or` keeps a right-hand series
/// only when its labels, the metric name aside, differ from every left-hand one).
constexpr const char* k_sample_time = "gua_sample_time";

/// Moves the values at `at` (scraped at or before `t`) to `t` itself along the line to the
/// values at `next` (scraped after `t`) when both come from one run of the daemon and did not
/// go down: a counter then grew steadily in between as far as the scrapes can tell.
void interpolate(HostAt& at, const HostAt& next, TimeUs t) {
    const double ts = static_cast<double>(t) / 1e6;
    if (!at.sample_time || !next.sample_time || !at.start_time ||
        at.start_time != next.start_time || *at.sample_time > ts || *next.sample_time <= ts) {
        return;
    }
    const double f = (ts - *at.sample_time) / (*next.sample_time - *at.sample_time);
    for (auto& [name, values] : at.counters) {
        const auto family = next.counters.find(name);
        if (family == next.counters.end()) {
            continue;
        }
        for (auto& [key, v] : values) {
            const auto it = family->second.find(key);
            if (it != family->second.end() && it->second >= v) {
                v += (it->second - v) * f;
            }
        }
    }
}

} // namespace

/// Lookups of every family at `t` for `hosts`, into m_as.at.
void CounterReader::lookups(const std::vector<std::string>& hosts, TimeUs t, Jobs& jobs) {
    const FleetShape shape{hosts.size(), k_lookup_series_guess, m_out.sample_interval_us};
    for (const PlannedRequest& r : plan_lookup(shape, t, m_q.limits)) {
        const std::string hs = host_selector(hosts, r.first_host, r.hosts);
        const std::string q = fmt::format(
            "sum by ({}) ({{{}, {}}}) or label_replace(max by ({}) (timestamp({}{{{}}})), "
            "\"{}\", \"1\", \"\", \"\")",
            m_by_list, m_name_matcher, hs, m_q.host_label, m_q.start_time_gauge, hs, k_sample_time);
        jobs.emplace_back([this, q, t](PrometheusClient& client) {
            client.query_each(q, t, [&](PromLabels& labels, std::optional<double> v) {
                if (v) {
                    on_lookup(labels, *v, t);
                }
            });
        });
    }
}

void CounterReader::on_lookup(const PromLabels& labels, double v, TimeUs t) {
    const std::string name = prom_label(labels, "__name__");
    const std::string host = prom_label(labels, m_q.host_label);
    const std::lock_guard<std::mutex> lock(m_as.mutex);
    HostAt& h = m_as.at[host][t];
    if (name == m_q.start_time_gauge) {
        h.start_time = v;
        return;
    }
    if (!prom_label(labels, k_sample_time).empty()) {
        h.sample_time = v;
        return;
    }
    add_counter(m_as, h, m_q, name, labels, v);
    for (const GaugeFamily& g : m_q.gauges) {
        if (g.name == name) {
            const PromLabels key = project(labels, m_q.host_label, g.labels);
            auto [it, fresh] = m_as.gauges[name].try_emplace(series_key(key), PromSample{key, v});
            it->second.value = std::max(it->second.value, v);
        }
    }
}

/// One family's increase() over a scan's range, labelled with its name.
std::string CounterReader::scan_part(const CounterFamily& f, const std::string& hs,
                                     const std::string& range, bool pods) const {
    const std::string group =
        m_q.host_label + (f.labels.empty() ? "" : ", " + join(f.labels, ", "));
    std::string inner;
    if (pods) {
        inner = fmt::format("increase({0}{{{1}, pod!=\"\"}}{2}) or increase({0}{{{1}, "
                            "pod=\"\", container!=\"\"}}{2}) or increase({0}{{{1}, "
                            "pod=\"\", container=\"\", namespace!=\"\"}}{2})",
                            f.name, hs, range);
    } else if (f.pod_series) {
        inner = fmt::format("increase({}{{{}, namespace=\"\", pod=\"\", "
                            "container=\"\"}}{})",
                            f.name, hs, range);
    } else {
        inner = fmt::format("increase({}{{{}}}{})", f.name, hs, range);
    }
    return fmt::format("label_replace(sum by ({}) ({}), \"gua_family\", "
                       "\"{}\", \"\", \"\")",
                       group, inner, f.name);
}

/// increase() of every family over (a, b] for `hosts` (pod series alone, or without them).
void CounterReader::scans(const std::vector<std::string>& hosts, TimeUs a, TimeUs b, bool pods,
                          std::int64_t series_per_host, Jobs& jobs) {
    const FleetShape shape{hosts.size(), series_per_host, m_out.sample_interval_us};
    for (const PlannedRequest& r : plan_scan(shape, a, b, m_q.limits)) {
        const std::string hs = host_selector(hosts, r.first_host, r.hosts);
        const std::string range = prom_range(r.end - r.start);
        std::vector<std::string> parts;
        for (const CounterFamily& f : m_q.counters) {
            if (!pods || f.pod_series) {
                parts.push_back(scan_part(f, hs, range, pods));
            }
        }
        if (parts.empty()) {
            continue;
        }
        jobs.emplace_back([this, q = join(parts, " or "), at = r.end](PrometheusClient& client) {
            client.query_each(q, at, [&](PromLabels& labels, std::optional<double> v) {
                if (v) {
                    on_scan(labels, *v);
                }
            });
        });
    }
}

void CounterReader::on_scan(const PromLabels& labels, double v) {
    const std::string name = prom_label(labels, "gua_family");
    for (const CounterFamily& f : m_q.counters) {
        if (f.name == name) {
            const PromLabels key = project(labels, m_q.host_label, f.labels);
            const std::lock_guard<std::mutex> lock(m_as.mutex);
            auto [it, fresh] = m_as.sums[name].try_emplace(series_key(key), PromSample{key, 0});
            it->second.value += std::max(v, 0.0);
        }
    }
}

/// The pod series (of the hosts that have any: the index says so without reading samples),
/// read in full.
void CounterReader::scan_pod_series(Jobs& jobs) {
    std::vector<std::string> pod_families;
    for (const CounterFamily& f : m_q.counters) {
        if (f.pod_series) {
            pod_families.push_back(f.name);
        }
    }
    if (pod_families.empty()) {
        return;
    }
    const std::string n = "__name__=~\"" + join(pod_families, "|") + "\"";
    std::vector<std::string> pod_hosts = m_prom.label_values(
        m_q.host_label,
        {"{" + n + ", pod!=\"\"}", "{" + n + ", container!=\"\"}", "{" + n + ", namespace!=\"\"}"},
        m_q.from - k_lookback, m_q.to);
    std::sort(pod_hosts.begin(), pod_hosts.end());
    if (!pod_hosts.empty()) {
        scans(pod_hosts, m_q.from, m_q.to, true, k_lookup_series_guess / 10, jobs);
    }
}

/// Phase 1: every host at the window's edges, and the pod series. Each edge is looked up twice:
/// at the edge and two sample intervals later, so that the values can be brought from their
/// scrape to the edge itself (interpolate()).
void CounterReader::read_edges() {
    Jobs jobs;
    const DurationUs next = 2 * m_out.sample_interval_us;
    for (const TimeUs t : {m_q.from, m_q.to}) {
        lookups(m_out.hosts, t, jobs);
        lookups(m_out.hosts, t + next, jobs);
    }
    scan_pod_series(jobs);
    m_prom.parallel(jobs, m_q.limits.concurrency);
    for (auto& [host, times] : m_as.at) {
        for (const TimeUs t : {m_q.from, m_q.to}) {
            const auto at = times.find(t);
            const auto later = times.find(t + next);
            if (at != times.end() && later != times.end()) {
                interpolate(at->second, later->second, t);
            }
        }
    }
}

} // namespace gua::report::counters_parts

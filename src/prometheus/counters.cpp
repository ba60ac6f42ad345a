// SPDX-License-Identifier: Apache-2.0
// Lookups at chunk edges, telescoping where a daemon ran throughout, increase() elsewhere (the
// per-step sums and range reads are in steps.cpp, the last values of hosts that went
// away in last_values.cpp).
#include "prometheus/counters.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "prometheus/answer.hpp"
#include "prometheus/counters_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <set>
#include <span>

namespace gua::report {

using counters_parts::add_counter;
using counters_parts::Assembly;
using counters_parts::HostAt;
using counters_parts::join;
using counters_parts::k_lookup_series_guess;
using counters_parts::project;
using counters_parts::read_last_values;

namespace {

constexpr DurationUs k_lookback = 5 * k_us_per_minute;
constexpr DurationUs k_chunk = k_us_per_day;
constexpr DurationUs k_default_interval = 15 * k_us_per_second;
/// Slack on the bound of an appeared series: a tick's counting can run ahead of the wall clock.
constexpr double k_new_series_slack_s = 120;

/// The latest start time a daemon's gauge can mean, in seconds since the epoch (the bound of
/// a sample time in answer.cpp): a larger value is a broken server's.
constexpr double k_max_start_time_s = 1e11;

/// A start-time gauge's value in µs, held within [0, k_max_start_time_s] (NaN: 0) before it is
/// converted: a server's number is not trusted to fit a TimeUs.
TimeUs start_time_us(double seconds) {
    const double s = seconds >= 0 ? std::min(seconds, k_max_start_time_s) : 0.0;
    return static_cast<TimeUs>(std::llround(s * 1e6));
}

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

namespace {

using Jobs = std::vector<std::function<void(PrometheusClient&)>>;

/// One read_counters() call: the query, what its phases assemble, and the phases in order.
class CounterReader {
  public:
    CounterReader(PrometheusClient& prom, const CounterQuery& query) : m_prom(prom), m_q(query) {}

    CounterTotals read();

  private:
    bool find_hosts();
    void measure_interval();
    std::string host_selector(const std::vector<std::string>& hosts, std::size_t first,
                              std::size_t n) const {
        return label_matcher(m_q.host_label, std::span<const std::string>(hosts.data() + first, n));
    }
    void lookups(const std::vector<std::string>& hosts, TimeUs t, Jobs& jobs);
    void on_lookup(const PromLabels& labels, double v, TimeUs t);
    void scans(const std::vector<std::string>& hosts, TimeUs a, TimeUs b, bool pods,
               std::int64_t series_per_host, Jobs& jobs);
    std::string scan_part(const CounterFamily& f, const std::string& hs, const std::string& range,
                          bool pods) const;
    void on_scan(const PromLabels& labels, double v);
    void read_edges();
    void scan_pod_series(Jobs& jobs);
    std::optional<double> started(const std::string& host, TimeUs t) const;
    void read_day_starts(const std::vector<std::string>& unstable, const std::vector<TimeUs>& days);
    void cut_chunks(const std::string& host, const std::vector<TimeUs>& days,
                    std::map<TimeUs, std::vector<std::string>>& wanted);
    void read_unstable_hosts();
    bool carried_over(const std::string& host, TimeUs a, TimeUs probe);
    std::int64_t note_series(const std::string& host);
    bool telescope_chunk(const std::string& host, TimeUs a, TimeUs b);
    void telescope_hosts();
    CounterTotals collect();

    PrometheusClient& m_prom;
    const CounterQuery& m_q;
    CounterTotals m_out;
    Assembly m_as;
    std::string m_name_matcher;
    std::string m_by_list;
    std::map<std::string, std::vector<TimeUs>> m_bounds_of;     // an unstable host's chunk bounds
    std::map<std::string, std::map<TimeUs, double>> m_start_at; // its start time at day bounds
    std::map<std::string, std::map<TimeUs, TimeUs>> m_probe_of; // host → chunk start → probe
};

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

} // namespace

CounterTotals read_counters(PrometheusClient& prom, const CounterQuery& query) {
    return CounterReader(prom, query).read();
}

} // namespace gua::report

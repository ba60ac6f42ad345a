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
#include <mutex>
#include <set>

namespace gua::report {

using counters_parts::add_counter;
using counters_parts::Assembly;
using counters_parts::HostAt;
using counters_parts::join;
using counters_parts::k_lookup_series_guess;
using counters_parts::k_start_time;
using counters_parts::project;
using counters_parts::read_last_values;

namespace {

constexpr DurationUs k_lookback = 5 * k_us_per_minute;
constexpr DurationUs k_chunk = k_us_per_day;
constexpr DurationUs k_default_interval = 15 * k_us_per_second;
/// Slack on the bound of an appeared series: a tick's counting can run ahead of the wall clock.
constexpr double k_new_series_slack_s = 120;

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

CounterTotals read_counters(PrometheusClient& prom, const std::string& host_label, TimeUs from,
                            TimeUs to, const std::vector<CounterFamily>& counters,
                            const std::vector<GaugeFamily>& gauges, const PromLimits& limits) {
    CounterTotals out;
    std::vector<std::string> names{k_start_time};
    std::set<std::string> union_labels{host_label};
    for (const CounterFamily& f : counters) {
        names.push_back(f.name);
        union_labels.insert(f.labels.begin(), f.labels.end());
        if (f.pod_series) {
            union_labels.insert({"namespace", "pod", "container"});
        }
    }
    for (const GaugeFamily& g : gauges) {
        names.push_back(g.name);
        union_labels.insert(g.labels.begin(), g.labels.end());
    }
    const std::string name_matcher = "__name__=~\"" + join(names, "|") + "\"";
    out.hosts = prom.label_values(host_label, {"{" + name_matcher + "}"}, from - k_lookback, to);
    std::sort(out.hosts.begin(), out.hosts.end());
    out.hosts.erase(std::unique(out.hosts.begin(), out.hosts.end()), out.hosts.end());
    if (out.hosts.empty()) {
        return out;
    }

    // The interval between samples, from the daemons' start-time gauge over the last hour.
    const DurationUs last_hour = std::min<DurationUs>(k_us_per_hour, to - from);
    out.sample_interval_us = k_default_interval;
    for (const PromSample& s : prom.query(
             fmt::format("max(count_over_time({}{}))", k_start_time, prom_range(last_hour)), to)) {
        if (s.value >= 2) {
            out.sample_interval_us = std::max<DurationUs>(
                static_cast<DurationUs>(static_cast<double>(last_hour) / s.value), k_us_per_ms);
        }
    }

    Assembly as;
    std::vector<std::string> by(union_labels.begin(), union_labels.end());
    by.insert(by.begin(), "__name__");
    const std::string by_list = join(by, ", ");
    const auto host_selector = [&](const std::vector<std::string>& hosts, std::size_t first,
                                   std::size_t n) {
        return label_matcher(host_label, std::span<const std::string>(hosts.data() + first, n));
    };
    // Lookups of every family at `t` for `hosts`, into as.at.
    const auto lookups = [&](const std::vector<std::string>& hosts, TimeUs t,
                             std::vector<std::function<void(PrometheusClient&)>>& jobs) {
        const FleetShape shape{hosts.size(), k_lookup_series_guess, out.sample_interval_us};
        for (const PlannedRequest& r : plan_lookup(shape, t, limits)) {
            const std::string hs = host_selector(hosts, r.first_host, r.hosts);
            const std::string q = fmt::format(
                "sum by ({}) ({{{}, {}}}) or label_replace(max by ({}) (timestamp({}{{{}}})), "
                "\"{}\", \"1\", \"\", \"\")",
                by_list, name_matcher, hs, host_label, k_start_time, hs, k_sample_time);
            jobs.emplace_back([&, q, t](PrometheusClient& client) {
                client.query_each(q, t, [&](PromLabels& labels, std::optional<double> v) {
                    if (!v) {
                        return;
                    }
                    const std::string name = prom_label(labels, "__name__");
                    const std::string host = prom_label(labels, host_label);
                    const std::lock_guard<std::mutex> lock(as.mutex);
                    HostAt& h = as.at[host][t];
                    if (name == k_start_time) {
                        h.start_time = *v;
                        return;
                    }
                    if (!prom_label(labels, k_sample_time).empty()) {
                        h.sample_time = *v;
                        return;
                    }
                    add_counter(as, h, counters, host_label, name, labels, *v);
                    for (const GaugeFamily& g : gauges) {
                        if (g.name == name) {
                            const PromLabels key = project(labels, host_label, g.labels);
                            auto [it, fresh] =
                                as.gauges[name].try_emplace(series_key(key), PromSample{key, *v});
                            it->second.value = std::max(it->second.value, *v);
                        }
                    }
                });
            });
        }
    };
    // increase() of every family over (a, b] for `hosts` (pod series alone, or without them).
    const auto scans = [&](const std::vector<std::string>& hosts, TimeUs a, TimeUs b, bool pods,
                           std::int64_t series_per_host,
                           std::vector<std::function<void(PrometheusClient&)>>& jobs) {
        const FleetShape shape{hosts.size(), series_per_host, out.sample_interval_us};
        for (const PlannedRequest& r : plan_scan(shape, a, b, limits)) {
            const std::string hs = host_selector(hosts, r.first_host, r.hosts);
            const std::string range = prom_range(r.end - r.start);
            std::vector<std::string> parts;
            for (const CounterFamily& f : counters) {
                if (pods && !f.pod_series) {
                    continue;
                }
                const std::string group =
                    host_label + (f.labels.empty() ? "" : ", " + join(f.labels, ", "));
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
                parts.push_back(fmt::format("label_replace(sum by ({}) ({}), \"gua_family\", "
                                            "\"{}\", \"\", \"\")",
                                            group, inner, f.name));
            }
            if (parts.empty()) {
                continue;
            }
            const std::string q = join(parts, " or ");
            const TimeUs at = r.end;
            jobs.emplace_back([&, q, at](PrometheusClient& client) {
                client.query_each(q, at, [&](PromLabels& labels, std::optional<double> v) {
                    if (!v) {
                        return;
                    }
                    const std::string name = prom_label(labels, "gua_family");
                    for (const CounterFamily& f : counters) {
                        if (f.name == name) {
                            const PromLabels key = project(labels, host_label, f.labels);
                            const std::lock_guard<std::mutex> lock(as.mutex);
                            auto [it, fresh] =
                                as.sums[name].try_emplace(series_key(key), PromSample{key, 0});
                            it->second.value += std::max(*v, 0.0);
                        }
                    }
                });
            });
        }
    };

    // Phase 1: every host at the window's edges, and the pod series (of the hosts that have
    // any: the index says so without reading samples) read in full.
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    // Each edge is looked up twice: at the edge and two sample intervals later, so that the
    // values can be brought from their scrape to the edge itself (interpolate()).
    const DurationUs next = 2 * out.sample_interval_us;
    for (const TimeUs t : {from, to}) {
        lookups(out.hosts, t, jobs);
        lookups(out.hosts, t + next, jobs);
    }
    std::vector<std::string> pod_families;
    for (const CounterFamily& f : counters) {
        if (f.pod_series) {
            pod_families.push_back(f.name);
        }
    }
    if (!pod_families.empty()) {
        const std::string n = "__name__=~\"" + join(pod_families, "|") + "\"";
        std::vector<std::string> pod_hosts =
            prom.label_values(host_label,
                              {"{" + n + ", pod!=\"\"}", "{" + n + ", container!=\"\"}",
                               "{" + n + ", namespace!=\"\"}"},
                              from - k_lookback, to);
        std::sort(pod_hosts.begin(), pod_hosts.end());
        if (!pod_hosts.empty()) {
            scans(pod_hosts, from, to, true, k_lookup_series_guess / 10, jobs);
        }
    }
    prom.parallel(jobs, limits.concurrency);
    for (auto& [host, times] : as.at) {
        for (const TimeUs t : {from, to}) {
            const auto at = times.find(t);
            const auto later = times.find(t + next);
            if (at != times.end() && later != times.end()) {
                interpolate(at->second, later->second, t);
            }
        }
    }

    // Phase 2: hosts whose daemon did not run throughout (or was not seen at an edge). Their
    // start time at every day boundary (one series a host: cheap lookups) tells the days it ran
    // throughout; a run of such days is one chunk, looked up in full at its two ends only.
    const auto started = [&](const std::string& host, TimeUs t) {
        const auto h = as.at.find(host);
        if (h == as.at.end()) {
            return std::optional<double>();
        }
        const auto it = h->second.find(t);
        return it != h->second.end() ? it->second.start_time : std::nullopt;
    };
    const auto runs_throughout = [&](const std::string& host, TimeUs a, TimeUs b) {
        const std::optional<double> sa = started(host, a);
        const std::optional<double> sb = started(host, b);
        return sa && sb && *sa == *sb;
    };
    std::vector<std::string>& unstable = out.unstable;
    for (const std::string& host : out.hosts) {
        if (!runs_throughout(host, from, to)) {
            unstable.push_back(host);
        }
        if (!started(host, to)) {
            out.gone_at_end.push_back(host);
        }
    }
    std::map<std::string, std::vector<TimeUs>> bounds_of;     // an unstable host's chunk bounds
    std::map<std::string, std::map<TimeUs, double>> start_at; // its start time at day bounds
    std::map<TimeUs, std::vector<std::string>> wanted;        // lookup time → hosts
    const std::vector<TimeUs> days = chunk_bounds(from, to, k_chunk);
    if (!unstable.empty() && days.size() > 2) {
        jobs.clear();
        const FleetShape shape{unstable.size(), 1, out.sample_interval_us};
        for (std::size_t i = 1; i + 1 < days.size(); ++i) {
            for (const PlannedRequest& r : plan_lookup(shape, days[i], limits)) {
                const std::string q =
                    fmt::format("max by ({}) ({}{{{}}})", host_label, k_start_time,
                                host_selector(unstable, r.first_host, r.hosts));
                jobs.emplace_back([&, q, t = days[i]](PrometheusClient& client) {
                    client.query_each(q, t, [&](PromLabels& labels, std::optional<double> v) {
                        if (v) {
                            const std::lock_guard<std::mutex> lock(as.mutex);
                            start_at[prom_label(labels, host_label)][t] = *v;
                        }
                    });
                });
            }
        }
        prom.parallel(jobs, limits.concurrency);
    }
    // A chunk in which the daemon restarted is read at its ends too if its counters carried
    // over the restart (through the daemon's database): checked by a lookup just after the
    // restart, when the new daemon's counters must be at least what they were at the chunk's
    // start (a new database starts them over).
    std::map<std::string, std::map<TimeUs, TimeUs>> probe_of; // host → chunk start → probe time
    for (const std::string& host : unstable) {
        const auto start_time = [&](TimeUs t) {
            if (t == from || t == to) {
                return started(host, t);
            }
            const auto it = start_at[host].find(t);
            return it != start_at[host].end() ? std::optional<double>(it->second) : std::nullopt;
        };
        const auto ran = [&](std::size_t day) { // days[day] .. days[day + 1]
            const std::optional<double> a = start_time(days[day]);
            const std::optional<double> b = start_time(days[day + 1]);
            return a && b && *a == *b;
        };
        std::vector<TimeUs>& bounds = bounds_of[host];
        bounds.push_back(from);
        for (std::size_t k = 1; k + 1 < days.size(); ++k) {
            if (!ran(k - 1) || !ran(k)) {
                bounds.push_back(days[k]);
                wanted[days[k]].push_back(host);
            }
        }
        bounds.push_back(to);
        for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
            const std::optional<double> sa = start_time(bounds[c]);
            const std::optional<double> sb = start_time(bounds[c + 1]);
            if (sa && sb && *sa != *sb) {
                const auto restarted = static_cast<TimeUs>(std::llround(*sb * 1e6));
                const TimeUs probe = std::clamp(restarted + 2 * out.sample_interval_us,
                                                bounds[c] + 1, bounds[c + 1]);
                probe_of[host][bounds[c]] = probe;
                wanted[probe].push_back(host);
            }
        }
    }
    jobs.clear();
    for (const auto& [t, hosts] : wanted) {
        lookups(hosts, t, jobs);
    }
    prom.parallel(jobs, limits.concurrency);

    /// False when a counter of `host` at `probe` is lower than (or missing from) what it was at
    /// `a`: the daemon started over on a new database.
    const auto carried_over = [&](const std::string& host, TimeUs a, TimeUs probe) {
        const auto& times = as.at[host];
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
    };

    // A host that went away for good: its counters stay where they stopped.
    read_last_values(prom, host_label, counters, out.sample_interval_us, limits, bounds_of, as);

    // Phase 3: telescope each host's chunks; read the others in full.
    std::map<std::pair<TimeUs, TimeUs>, std::vector<std::string>> full; // chunk → hosts
    std::int64_t most_series = 1;
    for (const std::string& host : out.hosts) {
        std::int64_t series = 0;
        std::map<std::string, double> latest; // family + series key → value at the last lookup
        bool went_down = false;
        for (const auto& [t, h] : as.at[host]) {
            std::int64_t n = 0;
            for (const auto& [name, values] : h.counters) {
                n += static_cast<std::int64_t>(values.size());
                out.series_per_host[name] =
                    std::max(out.series_per_host[name], static_cast<std::int64_t>(values.size()));
                for (const auto& [key, v] : values) {
                    auto [it, fresh] = latest.try_emplace(name + '\x1d' + key, v);
                    went_down = went_down || (!fresh && v < it->second);
                    it->second = v;
                }
            }
            series = std::max(series, n);
        }
        if (went_down) {
            out.went_down.push_back(host);
        }
        most_series = std::max(most_series, series);
        const auto own = bounds_of.find(host);
        const std::vector<TimeUs> bounds =
            own != bounds_of.end() ? own->second : std::vector{from, to};
        for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
            const TimeUs a = bounds[c];
            const TimeUs b = bounds[c + 1];
            std::map<std::string, std::map<std::string, double>> increments;
            // Across a restart too when the counters carried over it: end − start is then still
            // the increase.
            const auto probes = probe_of.find(host);
            const auto probe = probes != probe_of.end() ? probes->second.find(a)
                                                        : std::map<TimeUs, TimeUs>::iterator();
            bool ok = probes == probe_of.end() || probe == probes->second.end() ||
                      carried_over(host, a, probe->second);
            for (const CounterFamily& f : counters) {
                if (!ok) {
                    break;
                }
                const double max_new =
                    f.max_rate > 0
                        ? f.max_rate * (static_cast<double>(b - a) / 1e6 + k_new_series_slack_s)
                        : 0;
                std::optional<std::map<std::string, double>> d = telescope(
                    as.at[host][a].counters[f.name], as.at[host][b].counters[f.name], max_new);
                ok = d.has_value();
                if (d) {
                    increments[f.name] = std::move(*d);
                }
            }
            if (!ok) {
                full[{a, b}].push_back(host);
                continue;
            }
            for (const auto& [name, values] : increments) {
                for (const auto& [key, d] : values) {
                    as.sums[name].at(key).value += d;
                }
            }
        }
    }
    jobs.clear();
    for (const auto& [chunk, hosts] : full) {
        out.full_reads += hosts.size();
        scans(hosts, chunk.first, chunk.second, false, most_series, jobs);
    }
    prom.parallel(jobs, limits.concurrency);
    check_rates(as, counters, prom.url(), from, to, out.sample_interval_us);

    for (auto& [name, sums] : as.sums) {
        for (auto& [key, s] : sums) {
            out.increase[name].push_back(std::move(s));
        }
    }
    for (auto& [name, values] : as.gauges) {
        for (auto& [key, s] : values) {
            out.gauge[name].push_back(std::move(s));
        }
    }
    return out;
}

} // namespace gua::report

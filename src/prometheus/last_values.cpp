// SPDX-License-Identifier: Apache-2.0
// The last values of hosts that went away for good inside the window (read_last_values in
// counters_parts.hpp).
#include "prometheus/counters_parts.hpp"
#include "prometheus/plan.hpp"

#include <fmt/format.h>

#include <functional>
#include <span>

namespace gua::report::counters_parts {

namespace {

using ChunkHosts = std::map<std::pair<TimeUs, TimeUs>, std::vector<std::string>>;

/// The hosts of `bounds_of` last seen at a bound before their last one, by the chunk that
/// starts at that bound: they went away for good inside it.
ChunkHosts gone_hosts(const std::map<std::string, std::vector<TimeUs>>& bounds_of, Assembly& as) {
    ChunkHosts gone; // chunk → hosts
    for (const auto& [host, bounds] : bounds_of) {
        const auto& times = as.at[host];
        const auto seen = [&](TimeUs t) {
            const auto it = times.find(t);
            return it != times.end() && it->second.start_time.has_value();
        };
        std::size_t last = bounds.size();
        while (last > 0 && !seen(bounds[last - 1])) {
            --last;
        }
        if (last > 0 && last < bounds.size()) {
            gone[{bounds[last - 1], bounds[last]}].push_back(host);
        }
    }
    return gone;
}

/// The start time gauge and every family's sum, each at its last value over `range` for the
/// hosts of matcher `hs`, labelled with the family's name.
std::string last_values_expr(const CounterQuery& q, const std::string& hs,
                             const std::string& range) {
    const std::string& host_label = q.host_label;
    std::vector<std::string> parts{
        fmt::format("label_replace(max by ({0}) (last_over_time({1}{{{2}}}{3})), \"gua_family\", "
                    "\"{1}\", \"\", \"\")",
                    host_label, q.start_time_gauge, hs, range)};
    for (const CounterFamily& f : q.counters) {
        parts.push_back(fmt::format(
            "label_replace(sum by ({}) (last_over_time({}{{{}{}}}{})), \"gua_family\", "
            "\"{}\", \"\", \"\")",
            host_label + (f.labels.empty() ? "" : ", " + join(f.labels, ", ")), f.name, hs,
            f.pod_series ? ", namespace=\"\", pod=\"\", container=\"\"" : "", range, f.name));
    }
    return join(parts, " or ");
}

} // namespace

void read_last_values(PrometheusClient& prom, const CounterQuery& q, DurationUs sample_interval_us,
                      const std::map<std::string, std::vector<TimeUs>>& bounds_of, Assembly& as) {
    const std::string& host_label = q.host_label;
    const PromLimits& limits = q.limits;
    const ChunkHosts gone = gone_hosts(bounds_of, as);
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    std::map<std::string, std::map<TimeUs, HostAt>> last_seen;
    for (const auto& [chunk, hosts] : gone) {
        const TimeUs a = chunk.first;
        const TimeUs b = chunk.second;
        const FleetShape shape{hosts.size(), k_lookup_series_guess, sample_interval_us};
        for (const PlannedRequest& r : plan_scan(shape, a, b, limits)) {
            if (r.start != a || r.end != b) {
                continue; // one host alone reads too much for one request: read in full below
            }
            const std::string hs = label_matcher(
                host_label, std::span<const std::string>(hosts.data() + r.first_host, r.hosts));
            const std::string expr = last_values_expr(q, hs, prom_range(b - a));
            jobs.emplace_back([&, expr, b](PrometheusClient& client) {
                client.query_each(expr, b, [&](PromLabels& labels, std::optional<double> v) {
                    if (!v) {
                        return;
                    }
                    const std::string name = prom_label(labels, "gua_family");
                    const std::string host = prom_label(labels, host_label);
                    const std::lock_guard<std::mutex> lock(as.mutex);
                    HostAt& h = last_seen[host][b];
                    if (name == q.start_time_gauge) {
                        h.start_time = *v;
                        return;
                    }
                    add_counter(as, h, q, name, labels, *v);
                });
            });
        }
    }
    prom.parallel(jobs, limits.concurrency);
    for (const auto& [chunk, hosts] : gone) {
        for (const std::string& host : hosts) {
            const auto seen = last_seen[host].find(chunk.second);
            if (seen == last_seen[host].end() ||
                seen->second.start_time != as.at[host][chunk.first].start_time) {
                continue;
            }
            // Its counters stay where they stopped at every later bound.
            for (const TimeUs t : bounds_of.at(host)) {
                if (t >= chunk.second) {
                    as.at[host][t] = seen->second;
                }
            }
        }
    }
}

} // namespace gua::report::counters_parts

// SPDX-License-Identifier: Apache-2.0
// Sums per host at every step of a window (the heatmap's increases) and plain range reads,
// in planned requests: the only reads of gua's counters that go through every sample.
#include "prometheus/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace gua::report {

namespace {

/// `expr` with every `{HOSTS}` replaced by the matcher of hosts [first, first + n).
std::string with_hosts(std::string expr, const std::string& host_label,
                       const std::vector<std::string>& hosts, std::size_t first, std::size_t n) {
    const std::string matcher =
        label_matcher(host_label, std::span<const std::string>(hosts.data() + first, n));
    for (std::size_t at = expr.find("{HOSTS}"); at != std::string::npos;
         at = expr.find("{HOSTS}", at + matcher.size())) {
        expr.replace(at, 7, matcher);
    }
    return expr;
}

} // namespace

void read_step_increases(PrometheusClient& prom, const std::string& host_label,
                         const std::vector<std::string>& hosts, std::int64_t series_per_host,
                         DurationUs sample_interval_us, const std::string& expr_by_host,
                         const std::string& peak_by_host, TimeUs from, TimeUs to, DurationUs step,
                         double max_rate, const PromLimits& limits,
                         const std::function<void(TimeUs, const PromLabels&, double)>& sink) {
    if (hosts.empty() || to <= from || step <= 0) {
        return;
    }
    // The points: the window's edges and the multiples of `step` strictly inside it.
    std::vector<TimeUs> points{from};
    const TimeUs first = (from / step + 1) * step;
    for (TimeUs t = first; t < to; t += step) {
        points.push_back(t);
    }
    points.push_back(to);
    const std::size_t inner = points.size() - 2;
    const FleetShape shape{hosts.size(), std::max<std::int64_t>(series_per_host, 1),
                           sample_interval_us};
    // Host batches from the plan of the inner steps (each batch's slices read in time order).
    std::vector<PlannedRequest> plan =
        inner > 0 ? plan_range(shape, points[1], points[inner], step, limits)
                  : plan_lookup(shape, from, limits);
    std::mutex mutex;
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    for (std::size_t i = 0; i < plan.size();) {
        std::size_t j = i;
        while (j < plan.size() && plan[j].first_host == plan[i].first_host) {
            ++j;
        }
        const std::string expr =
            with_hosts(expr_by_host, host_label, hosts, plan[i].first_host, plan[i].hosts);
        const std::string peak_expr =
            peak_by_host.empty()
                ? std::string()
                : with_hosts(peak_by_host, host_label, hosts, plan[i].first_host, plan[i].hosts);
        std::vector<PlannedRequest> slices(plan.begin() + static_cast<std::ptrdiff_t>(i),
                                           plan.begin() + static_cast<std::ptrdiff_t>(j));
        jobs.emplace_back([&, expr, peak_expr, slices](PrometheusClient& client) {
            // Per series: the latest point seen (its index in `points`) and value.
            std::map<std::string, std::pair<std::size_t, double>> last;
            std::map<std::string, PromLabels> labels_of;
            // Per series and point: the highest value of the step ending there.
            std::map<std::string, std::map<std::size_t, double>> peaks;
            const auto index_of = [&](TimeUs t) -> std::optional<std::size_t> {
                const auto p = std::lower_bound(points.begin() + 1, points.end() - 1, t);
                if (p != points.end() - 1 && *p == t) { // one of the steps
                    return static_cast<std::size_t>(p - points.begin());
                }
                return std::nullopt;
            };
            if (!peak_expr.empty()) {
                for (const PlannedRequest& r : inner > 0 ? slices : std::vector<PlannedRequest>{}) {
                    client.query_range_each(
                        peak_expr, r.start, r.end, step,
                        [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& values) {
                            auto& of = peaks[series_key(labels)];
                            for (const auto& [t, v] : values) {
                                if (const std::optional<std::size_t> k = index_of(t)) {
                                    of[*k] = v;
                                }
                            }
                        });
                }
                client.query_each(peak_expr, to, [&](PromLabels& labels, std::optional<double> v) {
                    if (v) {
                        peaks[series_key(labels)][points.size() - 1] = *v;
                    }
                });
            }
            // Whether `v` can have been counted from zero since point `prev`.
            const auto from_zero = [&](std::size_t prev, std::size_t index, double v) {
                return max_rate > 0 &&
                       v <= max_rate * static_cast<double>(points[index] - points[prev]) / 1e6;
            };
            const auto emit = [&](const std::string& key, std::size_t prev, std::size_t index,
                                  double increase) {
                const double each = increase / static_cast<double>(index - prev);
                const std::lock_guard<std::mutex> lock(mutex);
                for (std::size_t k = prev; k < index; ++k) {
                    sink(points[k], labels_of[key], each);
                }
            };
            const auto add = [&](PromLabels& labels, std::size_t index, double v) {
                const std::string key = series_key(labels);
                const auto it = last.find(key);
                if (it == last.end()) {
                    last.emplace(key, std::make_pair(index, v));
                    labels_of.emplace(key, labels);
                    // Appeared after the window's start: a new host or a first unmeasured
                    // second, counted from zero if it can have been.
                    if (index > 0 && from_zero(index - 1, index, v)) {
                        emit(key, index - 1, index, v);
                    }
                    return;
                }
                const auto [prev, pv] = it->second;
                it->second = {index, v};
                if (index <= prev) {
                    return;
                }
                // A step whose highest value is above its last one went down inside: what was
                // counted up to the drop, and (from zero, if it can be) what was after.
                const auto peak_of = peaks.find(key);
                const auto peak = peak_of != peaks.end()
                                      ? peak_of->second.find(index)
                                      : std::map<std::size_t, double>::iterator();
                if (peak_of != peaks.end() && peak != peak_of->second.end() && peak->second > v) {
                    emit(key, prev, index,
                         std::max(peak->second - pv, 0.0) + (from_zero(prev, index, v) ? v : 0.0));
                    return;
                }
                emit(key, prev, index, v >= pv ? v - pv : from_zero(prev, index, v) ? v : 0.0);
            };
            client.query_each(expr, from, [&](PromLabels& labels, std::optional<double> v) {
                if (v) {
                    add(labels, 0, *v);
                }
            });
            if (inner > 0) {
                for (const PlannedRequest& r : slices) {
                    client.query_range_each(
                        expr, r.start, r.end, step,
                        [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& values) {
                            for (const auto& [t, v] : values) {
                                if (const std::optional<std::size_t> k = index_of(t)) {
                                    add(labels, *k, v);
                                }
                            }
                        });
                }
            }
            client.query_each(expr, to, [&](PromLabels& labels, std::optional<double> v) {
                if (v) {
                    add(labels, points.size() - 1, *v);
                }
            });
        });
        i = j;
    }
    prom.parallel(jobs, limits.concurrency);
}

std::vector<PromSeries> read_range(PrometheusClient& prom, const std::string& host_label,
                                   const std::vector<std::string>& hosts,
                                   std::int64_t series_per_host, DurationUs sample_interval_us,
                                   const std::string& expr_by_host, TimeUs start, TimeUs end,
                                   DurationUs step, const PromLimits& limits) {
    std::vector<PromSeries> out;
    if (hosts.empty() || end < start) {
        return out;
    }
    const FleetShape shape{hosts.size(), std::max<std::int64_t>(series_per_host, 1),
                           sample_interval_us};
    std::map<std::string, std::size_t> index;
    std::mutex mutex;
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    for (const PlannedRequest& r : plan_range(shape, start, end, step, limits)) {
        jobs.emplace_back(
            [&, r, expr = with_hosts(expr_by_host, host_label, hosts, r.first_host, r.hosts)](
                PrometheusClient& client) {
                client.query_range_each(
                    expr, r.start, r.end, step,
                    [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& values) {
                        const std::lock_guard<std::mutex> lock(mutex);
                        const auto [it, fresh] = index.try_emplace(series_key(labels), out.size());
                        if (fresh) {
                            out.push_back(PromSeries{std::move(labels), {}});
                        }
                        auto& v = out[it->second].values;
                        v.insert(v.end(), values.begin(), values.end());
                    });
            });
    }
    prom.parallel(jobs, limits.concurrency);
    for (PromSeries& s : out) {
        std::sort(s.values.begin(), s.values.end());
    }
    return out;
}

} // namespace gua::report

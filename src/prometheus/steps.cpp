// SPDX-License-Identifier: Apache-2.0
// Sums per host at every step of a window (the heatmap's increases) and plain range reads,
// in planned requests: the only reads of gua's counters that go through every sample.
#include "prometheus/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
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

using StepSink = std::function<void(TimeUs, const PromLabels&, double)>;

/// One host batch of read_step_increases(): each series' latest point and the peaks of its
/// steps, turned into increases per step as the points arrive in time order.
class StepBatch {
  public:
    StepBatch(const StepQuery& q, const std::vector<TimeUs>& points, std::mutex& mutex,
              const StepSink& sink)
        : m_q(q), m_points(points), m_mutex(mutex), m_sink(sink) {}

    /// Reads `expr` (and `peak_expr`, when not empty) at the window's edges and over `slices`.
    void read(PrometheusClient& client, const std::string& expr, const std::string& peak_expr,
              const std::vector<PlannedRequest>& slices);

  private:
    /// The index in m_points of `t` when it is one of the steps inside the window.
    std::optional<std::size_t> index_of(TimeUs t) const {
        const auto p = std::lower_bound(m_points.begin() + 1, m_points.end() - 1, t);
        if (p != m_points.end() - 1 && *p == t) {
            return static_cast<std::size_t>(p - m_points.begin());
        }
        return std::nullopt;
    }
    std::size_t inner() const { return m_points.size() - 2; }
    void read_peaks(PrometheusClient& client, const std::string& peak_expr,
                    const std::vector<PlannedRequest>& slices);
    /// Whether `v` can have been counted from zero since point `prev`.
    bool from_zero(std::size_t prev, std::size_t index, double v) const {
        return m_q.max_rate > 0 &&
               v <= m_q.max_rate * static_cast<double>(m_points[index] - m_points[prev]) / 1e6;
    }
    void emit(const std::string& key, std::size_t prev, std::size_t index, double increase);
    void add(const PromLabels& labels, std::size_t index, double v);

    const StepQuery& m_q;
    const std::vector<TimeUs>& m_points;
    std::mutex& m_mutex;
    const StepSink& m_sink;
    /// Per series: the latest point seen (its index in m_points) and value.
    std::map<std::string, std::pair<std::size_t, double>> m_last;
    std::map<std::string, PromLabels> m_labels_of;
    /// Per series and point: the highest value of the step ending there.
    std::map<std::string, std::map<std::size_t, double>> m_peaks;
};

void StepBatch::read_peaks(PrometheusClient& client, const std::string& peak_expr,
                           const std::vector<PlannedRequest>& slices) {
    for (const PlannedRequest& r : inner() > 0 ? slices : std::vector<PlannedRequest>{}) {
        client.query_range_each(
            peak_expr, r.start, r.end, m_q.step,
            [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& values) {
                auto& of = m_peaks[series_key(labels)];
                for (const auto& [t, v] : values) {
                    if (const std::optional<std::size_t> k = index_of(t)) {
                        of[*k] = v;
                    }
                }
            });
    }
    client.query_each(peak_expr, m_q.to, [&](PromLabels& labels, std::optional<double> v) {
        if (v) {
            m_peaks[series_key(labels)][m_points.size() - 1] = *v;
        }
    });
}

void StepBatch::emit(const std::string& key, std::size_t prev, std::size_t index, double increase) {
    const double each = increase / static_cast<double>(index - prev);
    const std::lock_guard<std::mutex> lock(m_mutex);
    for (std::size_t k = prev; k < index; ++k) {
        m_sink(m_points[k], m_labels_of[key], each);
    }
}

void StepBatch::add(const PromLabels& labels, std::size_t index, double v) {
    const std::string key = series_key(labels);
    const auto it = m_last.find(key);
    if (it == m_last.end()) {
        m_last.emplace(key, std::make_pair(index, v));
        m_labels_of.emplace(key, labels);
        // Appeared after the window's start: a new host or a first unmeasured second, counted
        // from zero if it can have been.
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
    // A step whose highest value is above its last one went down inside: what was counted up to
    // the drop, and (from zero, if it can be) what was after.
    const auto peak_of = m_peaks.find(key);
    const auto peak = peak_of != m_peaks.end() ? peak_of->second.find(index)
                                               : std::map<std::size_t, double>::iterator();
    if (peak_of != m_peaks.end() && peak != peak_of->second.end() && peak->second > v) {
        emit(key, prev, index,
             std::max(peak->second - pv, 0.0) + (from_zero(prev, index, v) ? v : 0.0));
        return;
    }
    emit(key, prev, index, v >= pv ? v - pv : from_zero(prev, index, v) ? v : 0.0);
}

void StepBatch::read(PrometheusClient& client, const std::string& expr,
                     const std::string& peak_expr, const std::vector<PlannedRequest>& slices) {
    if (!peak_expr.empty()) {
        read_peaks(client, peak_expr, slices);
    }
    client.query_each(expr, m_q.from, [&](PromLabels& labels, std::optional<double> v) {
        if (v) {
            add(labels, 0, *v);
        }
    });
    if (inner() > 0) {
        for (const PlannedRequest& r : slices) {
            client.query_range_each(
                expr, r.start, r.end, m_q.step,
                [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& values) {
                    for (const auto& [t, v] : values) {
                        if (const std::optional<std::size_t> k = index_of(t)) {
                            add(labels, *k, v);
                        }
                    }
                });
        }
    }
    client.query_each(expr, m_q.to, [&](PromLabels& labels, std::optional<double> v) {
        if (v) {
            add(labels, m_points.size() - 1, *v);
        }
    });
}

} // namespace

void read_step_increases(PrometheusClient& prom, const HostSet& hosts, const StepQuery& q,
                         const StepSink& sink) {
    if (hosts.hosts.empty() || q.to <= q.from || q.step <= 0) {
        return;
    }
    // The points: the window's edges and the multiples of `step` strictly inside it.
    std::vector<TimeUs> points{q.from};
    const TimeUs first = (q.from / q.step + 1) * q.step;
    for (TimeUs t = first; t < q.to; t += q.step) {
        points.push_back(t);
    }
    points.push_back(q.to);
    const std::size_t inner = points.size() - 2;
    const FleetShape shape{hosts.hosts.size(), std::max<std::int64_t>(hosts.series_per_host, 1),
                           hosts.sample_interval_us};
    // Host batches from the plan of the inner steps (each batch's slices read in time order).
    std::vector<PlannedRequest> plan =
        inner > 0 ? plan_range(shape, points[1], points[inner], q.step, hosts.limits)
                  : plan_lookup(shape, q.from, hosts.limits);
    std::mutex mutex;
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    for (std::size_t i = 0; i < plan.size();) {
        std::size_t j = i;
        while (j < plan.size() && plan[j].first_host == plan[i].first_host) {
            ++j;
        }
        const auto for_batch = [&](const std::string& e) {
            return e.empty() ? std::string()
                             : with_hosts(e, hosts.host_label, hosts.hosts, plan[i].first_host,
                                          plan[i].hosts);
        };
        std::vector<PlannedRequest> slices(plan.begin() + static_cast<std::ptrdiff_t>(i),
                                           plan.begin() + static_cast<std::ptrdiff_t>(j));
        jobs.emplace_back([&, expr = for_batch(q.expr_by_host), peak = for_batch(q.peak_by_host),
                           slices](PrometheusClient& client) {
            StepBatch(q, points, mutex, sink).read(client, expr, peak, slices);
        });
        i = j;
    }
    prom.parallel(jobs, hosts.limits.concurrency);
}

std::vector<PromSeries> read_range(PrometheusClient& prom, const HostSet& hosts,
                                   const std::string& expr_by_host, TimeUs start, TimeUs end,
                                   DurationUs step) {
    std::vector<PromSeries> out;
    if (hosts.hosts.empty() || end < start) {
        return out;
    }
    const FleetShape shape{hosts.hosts.size(), std::max<std::int64_t>(hosts.series_per_host, 1),
                           hosts.sample_interval_us};
    std::map<std::string, std::size_t> index;
    std::mutex mutex;
    std::vector<std::function<void(PrometheusClient&)>> jobs;
    for (const PlannedRequest& r : plan_range(shape, start, end, step, hosts.limits)) {
        jobs.emplace_back([&, r,
                           expr = with_hosts(expr_by_host, hosts.host_label, hosts.hosts,
                                             r.first_host, r.hosts)](PrometheusClient& client) {
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
    prom.parallel(jobs, hosts.limits.concurrency);
    for (PromSeries& s : out) {
        std::sort(s.values.begin(), s.values.end());
    }
    return out;
}

} // namespace gua::report

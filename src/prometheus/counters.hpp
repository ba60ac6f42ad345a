// SPDX-License-Identifier: Apache-2.0
// gua's counters over a report window across a fleet, read at the window's edges instead of
// sample by sample: a daemon's counters only grow (through restarts too, from its database), so
// a series' increase is its value at the end minus its value at the start. Only the days in
// which a host's counters started over (or a series ended) are read in full with increase().
#pragma once

#include "prometheus/api.hpp"
#include "prometheus/plan.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// A counter family of gua's exposition and how to read it.
struct CounterFamily {
    std::string name;                ///< e.g. "gua_gpu_seconds_total"
    std::vector<std::string> labels; ///< labels kept besides the host label
    /// The most a series can count per second of wall time (a card's seconds: 1); a series that
    /// appears inside a chunk with more did not start from zero, and the chunk is read in full.
    /// 0: no bound.
    double max_rate = 0;
    /// Identity families: series with a namespace, pod or container label end an hour after
    /// their container's last process and may come back from zero (docs/metrics.md), so they
    /// are always read in full; the other series of the family are read at the edges.
    bool pod_series = false;
};

/// A gauge family read at the same lookups: its largest value per (host, labels).
struct GaugeFamily {
    std::string name;
    std::vector<std::string> labels;
};

/// The counters' increase over the window and the gauges, per (host, labels) series group.
struct CounterTotals {
    std::vector<std::string> hosts; ///< every host with a series in the window, sorted
    std::map<std::string, std::vector<PromSample>> increase; ///< by family name
    std::map<std::string, std::vector<PromSample>> gauge;    ///< by family name
    /// Hosts whose daemon restarted or that were not seen at an edge (sorted): read by the day.
    std::vector<std::string> unstable;
    /// Of them, those with a counter lower at a lookup than at the one before (sorted): a daemon
    /// that started over on a new database.
    std::vector<std::string> went_down;
    /// Of them, those not seen at the window's end (sorted): removed, or stopped.
    std::vector<std::string> gone_at_end;
    std::size_t full_reads = 0; ///< (host, chunk) pairs read in full with increase()
    /// The interval between two samples of a series, as measured (15 s when it could not be).
    DurationUs sample_interval_us = 0;
    /// Per family, the most series one host has at the lookups.
    std::map<std::string, std::int64_t> series_per_host;
};

/// How far a counter's increase over a window may exceed what the window allows (a card's
/// seconds: the window itself): two scrape intervals (the values at each edge come from a
/// scrape next to it) and two minutes (a daemon's tick counted ahead of the wall clock).
DurationUs counter_tolerance_us(DurationUs sample_interval_us);

/// Label key of a series group: its labels in order, for maps.
std::string series_key(const PromLabels& labels);

/// The increase of each series over a chunk of a host whose daemon ran throughout, from the
/// series' values at the chunk's start and end (by series_key): end − start, or the end value
/// for a series that appeared (it started from zero). nullopt when the chunk must be read in
/// full: a series that ended or decreased, or one that appeared with more than `max_new`
/// (0: no bound).
std::optional<std::map<std::string, double>> telescope(const std::map<std::string, double>& start,
                                                       const std::map<std::string, double>& end,
                                                       double max_new);

/// What read_counters() reads: the families of every host over (from, to].
struct CounterQuery {
    std::string host_label; ///< the label that tells hosts apart
    TimeUs from = 0;
    TimeUs to = 0;
    std::vector<CounterFamily> counters;
    std::vector<GaugeFamily> gauges;
    PromLimits limits;
    /// The gauge of each daemon's start time (Unix seconds): a new value is a restart.
    std::string start_time_gauge;
};

/// Reads `query.counters` and `query.gauges` of every host over (from, to]: lookups at the
/// edges (and a minute after each, to bring the values from their scrape to the edge),
/// telescope() where the counters carried through; hosts whose start_time_gauge differs or is
/// missing at an edge are cut into days, looked up at the ends of each day with a restart (and
/// just after the restart, to see whether the counters carried over it); increase() for the days
/// that telescope() refuses and for pod series. Requests follow the plans of plan.hpp,
/// `limits.concurrency` at once. Throws Fatal naming the series when a family's increase is
/// more than its max_rate allows over the window (with counter_tolerance_us()).
CounterTotals read_counters(PrometheusClient& prom, const CounterQuery& query);

/// The hosts a fleet read covers, and what sizes its requests (plan.hpp).
struct HostSet {
    std::string host_label;
    std::vector<std::string> hosts;
    std::int64_t series_per_host = 1;
    DurationUs sample_interval_us = 0;
    PromLimits limits;
};

/// One expression read at every step of a window (read_step_increases).
struct StepQuery {
    std::string expr_by_host; ///< counters summed by the host label and more; `{HOSTS}`: matcher
    std::string peak_by_host; ///< the highest value within each step; "" for none
    TimeUs from = 0;
    TimeUs to = 0;
    DurationUs step = 0;
    double max_rate = 0; ///< the most a sum counts per second from zero (0: never)
};

/// The increase of `q.expr_by_host` (an instant-vector expression of counters summed by the
/// host label and more, with `{HOSTS}` where the host matcher goes) over each step of the window:
/// calls `sink(segment_start, labels, value)` for (from, s₁], (s₁, s₂], …, (sₙ, to] where sᵢ
/// are the multiples of `q.step` inside the window. Read per host from its sums at each step
/// (planned range queries, `hosts.limits.concurrency` at once). An increase across steps where
/// the host was not seen is spread evenly over them. A sum that appears after the window's
/// start, or that decreased, counts from zero when it holds at most `q.max_rate` per second
/// since the previous point (0: never), else as 0. `q.peak_by_host` gives the highest value
/// within each step: a step whose peak is above its value went down inside, and counts what was
/// counted up to the drop too.
void read_step_increases(PrometheusClient& prom, const HostSet& hosts, const StepQuery& q,
                         const std::function<void(TimeUs, const PromLabels&, double)>& sink);

/// `expr_by_host` (an instant-vector expression with `{HOSTS}` where the host matcher goes)
/// at start, start + step, … ≤ end for every host: planned query_range requests
/// (`hosts.limits.concurrency` at once), their series merged by labels.
std::vector<PromSeries> read_range(PrometheusClient& prom, const HostSet& hosts,
                                   const std::string& expr_by_host, TimeUs start, TimeUs end,
                                   DurationUs step);

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// A small client of Prometheus's HTTP query API (/api/v1/query, /api/v1/query_range) over libcurl.
#pragma once

#include "core/time.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {

/// Label name → value of one result series.
using PromLabels = std::map<std::string, std::string>;

/// The value of label `name`, "" when the series has no such label.
std::string prom_label(const PromLabels& labels, const std::string& name);

/// One series of an instant query.
struct PromSample {
    PromLabels labels;
    double value = 0;
};

/// One series of a range query: (time in UTC microseconds, value) pairs in time order.
struct PromSeries {
    PromLabels labels;
    std::vector<std::pair<TimeUs, double>> values;
};

/// One HTTP exchange with a Prometheus server: the status and body of its answer.
struct PromAnswer {
    long status = 0;
    std::string body;
};

/// Sends the form `params` (name, unencoded value) to `path` (e.g. "/api/v1/query") and returns
/// the answer; throws Fatal when the server cannot be reached.
using PromTransport = std::function<PromAnswer(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& params)>;

/// The longest one request may take (connecting included).
inline constexpr DurationUs k_prom_request_timeout_us = 60 * k_us_per_second;
/// The longest all the requests of one report may take together, by default.
inline constexpr DurationUs k_prom_report_timeout_us = 10 * k_us_per_minute;
/// The largest body of one answer, in bytes (docs/security.md).
inline constexpr std::size_t k_prom_max_body_bytes = 64UL * 1024 * 1024;

/// Queries one Prometheus server. Every failure (unreachable, HTTP error, query error, bad
/// JSON, a sample time out of range, an impossible value, an answer past the limits of
/// answer.hpp, a body past k_prom_max_body_bytes, the report's time limit reached)
/// throws Fatal with a one-line message naming the server.
class PrometheusClient {
  public:
    /// `base_url` is the server's root, e.g. "http://127.0.0.1:9090" (a trailing '/' is fine);
    /// every request of this client (and of the clients parallel() makes) ends within
    /// `report_timeout_us` of its construction, and each within `request_timeout_us`.
    explicit PrometheusClient(std::string base_url,
                              DurationUs report_timeout_us = k_prom_report_timeout_us,
                              DurationUs request_timeout_us = k_prom_request_timeout_us);
    /// A client whose requests go to `transport` instead of libcurl (tests and fuzzing: the
    /// answers are parsed exactly as a server's).
    PrometheusClient(std::string base_url, PromTransport transport);
    ~PrometheusClient();
    PrometheusClient(const PrometheusClient&) = delete;
    PrometheusClient& operator=(const PrometheusClient&) = delete;

    /// Evaluates the instant vector `promql` at `at`.
    std::vector<PromSample> query(const std::string& promql, TimeUs at);
    /// Evaluates `promql` at start, start + step, … ≤ end, split into requests of at most
    /// 10,000 points per series (Prometheus refuses more than 11,000).
    std::vector<PromSeries> query_range(const std::string& promql, TimeUs start, TimeUs end,
                                        DurationUs step);
    /// Evaluates the instant vector `promql` at `at`, handing each series (its one point; an
    /// answer without one is refused) to `sink` as the answer is read.
    void query_each(const std::string& promql, TimeUs at,
                    const std::function<void(PromLabels&, std::optional<double>)>& sink);
    /// One query_range request (at most 11,000 steps: the caller plans them), each series
    /// handed to `sink` as the answer is read.
    void query_range_each(
        const std::string& promql, TimeUs start, TimeUs end, DurationUs step,
        const std::function<void(PromLabels&, std::vector<std::pair<TimeUs, double>>&)>& sink);
    /// Evaluates `promql`, a range selector such as `m[10m]`, at `at`, handing each series with
    /// every raw sample of the range (scrape times and values, oldest first) to `sink`.
    void query_samples(
        const std::string& promql, TimeUs at,
        const std::function<void(PromLabels&, std::vector<std::pair<TimeUs, double>>&)>& sink);
    /// The values of label `name` on the series that any of the selectors `match` selects in
    /// [start, end] (the server's index only: no sample is read).
    std::vector<std::string> label_values(const std::string& name,
                                          const std::vector<std::string>& match, TimeUs start,
                                          TimeUs end);
    /// Runs every job, up to `concurrency` at once, each with a client of the same server on
    /// its own connection (one at a time on this client when it has a transport). Rethrows the
    /// first job's error once every running job has finished; later jobs are then skipped.
    void parallel(const std::vector<std::function<void(PrometheusClient&)>>& jobs,
                  std::size_t concurrency);
    /// The server root given to the constructor, without a trailing '/'.
    const std::string& url() const { return m_base; }

  private:
    using Params = std::vector<std::pair<std::string, std::string>>;
    using Deadline = std::chrono::steady_clock::time_point;
    PrometheusClient(std::string base_url, Deadline deadline, DurationUs report_timeout_us,
                     DurationUs request_timeout_us);
    PromAnswer send(const std::string& path, const Params& params);
    PromAnswer curl_post(const std::string& path, const Params& params, DurationUs timeout_us);
    /// The time left before the deadline; throws Fatal when there is none.
    DurationUs time_left() const;
    [[noreturn]] void report_timed_out() const;

    std::string m_base;
    DurationUs m_report_timeout_us = 0;
    DurationUs m_request_timeout_us = k_prom_request_timeout_us;
    Deadline m_deadline;
    PromTransport m_transport;
    bool m_trace = false; ///< GUA_PROMETHEUS_TRACE set: each request's time and size on stderr
    void* m_curl = nullptr;
};

/// Formats a time as Prometheus API seconds with millisecond precision, e.g. "1700000000.250".
std::string prom_time(TimeUs t);

/// Formats a duration for a PromQL range selector in milliseconds, e.g. "[30000ms]".
std::string prom_range(DurationUs d);

} // namespace gua::report

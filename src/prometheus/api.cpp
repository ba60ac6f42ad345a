// SPDX-License-Identifier: Apache-2.0
// Prometheus HTTP API client: form-encoded POSTs, JSON results, one-line errors.
#include "prometheus/api.hpp"

#include "core/curl_api.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "prometheus/answer.hpp"

#define CURL_DISABLE_TYPECHECK // calls go through function pointers
#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

namespace gua::report {

std::string prom_label(const PromLabels& labels, const std::string& name) {
    const auto it = labels.find(name);
    return it != labels.end() ? it->second : std::string();
}

namespace {

/// libcurl, loaded on first use: only `gua report --prometheus` needs it and its TLS, Kerberos
/// and LDAP dependencies.
const CurlApi& curl_api() {
    return gua::curl_api("gua report --prometheus");
}

using nlohmann::json;

constexpr std::int64_t k_max_points = 10000;

/// Where libcurl writes an answer's body: at most k_prom_max_body_bytes, and not past gua's
/// memory limit (checked every MiB).
struct BodySink {
    std::string* body = nullptr;
    const std::string* server = nullptr;
    std::size_t unchecked = 0;
    bool too_big = false;
    std::optional<Fatal> memory; ///< why the memory check stopped the transfer
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
    auto* sink = static_cast<BodySink*>(out);
    const std::size_t n = size * count;
    if (sink->body->size() + n > k_prom_max_body_bytes) {
        sink->too_big = true;
        return 0; // stops the transfer
    }
    sink->body->append(data, n);
    sink->unchecked += n;
    if (sink->unchecked >= 1024 * 1024) {
        sink->unchecked = 0;
        try {
            check_prom_memory(*sink->server);
        } catch (const Fatal& e) {
            sink->memory = e;
            return 0;
        }
    }
    return n;
}

std::string label_key(const PromLabels& labels) {
    std::string key;
    for (const auto& [k, v] : labels) {
        key += k + '\x1f' + v + '\x1e';
    }
    return key;
}

} // namespace

std::string prom_time(TimeUs t) {
    const TimeUs ms = std::max<TimeUs>(t, 0) / 1000;
    return fmt::format("{}.{:03}", ms / 1000, ms % 1000);
}

std::string prom_range(DurationUs d) {
    return fmt::format("[{}ms]", std::max<DurationUs>(d / 1000, 1));
}

namespace {

/// The server root without trailing '/'; throws Fatal (usage) for anything but an HTTP(S) URL.
std::string server_root(std::string url) {
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
        throw Fatal(fmt::format("--prometheus {}: expected an http:// or https:// URL", url),
                    ExitCode::usage);
    }
    return url;
}

/// `params` as an URL-encoded form ("name=value&…"); throws Fatal when libcurl runs out of
/// memory.
std::string encode_form(const CurlApi& api, CURL* curl,
                        const std::vector<std::pair<std::string, std::string>>& params) {
    std::string form;
    for (const auto& [name, value] : params) {
        char* escaped = api.easy_escape(curl, value.c_str(), static_cast<int>(value.size()));
        if (escaped == nullptr) {
            throw Fatal("cannot encode a Prometheus query (out of memory)");
        }
        form += (form.empty() ? "" : "&") + name + "=" + escaped;
        api.free(escaped);
    }
    return form;
}

} // namespace

PrometheusClient::PrometheusClient(std::string base_url, DurationUs report_timeout_us,
                                   DurationUs request_timeout_us)
    : PrometheusClient(std::move(base_url),
                       std::chrono::steady_clock::now() +
                           std::chrono::microseconds(std::max<DurationUs>(report_timeout_us, 0)),
                       report_timeout_us, request_timeout_us) {}

PrometheusClient::PrometheusClient(std::string base_url, Deadline deadline,
                                   DurationUs report_timeout_us, DurationUs request_timeout_us)
    : m_base(server_root(std::move(base_url))), m_report_timeout_us(report_timeout_us),
      m_request_timeout_us(request_timeout_us), m_deadline(deadline),
      m_trace(std::getenv("GUA_PROMETHEUS_TRACE") != nullptr) {
    m_curl = curl_api().easy_init();
    if (m_curl == nullptr) {
        throw Fatal("cannot initialise libcurl");
    }
}

PrometheusClient::PrometheusClient(std::string base_url, PromTransport transport)
    : m_base(server_root(std::move(base_url))), m_report_timeout_us(k_prom_report_timeout_us),
      m_deadline(std::chrono::steady_clock::now() +
                 std::chrono::microseconds(k_prom_report_timeout_us)),
      m_transport(std::move(transport)), m_trace(std::getenv("GUA_PROMETHEUS_TRACE") != nullptr) {}

DurationUs PrometheusClient::time_left() const {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                          m_deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
        report_timed_out();
    }
    return left;
}

void PrometheusClient::report_timed_out() const {
    throw Fatal(fmt::format("Prometheus at {} did not finish answering within the report's time "
                            "limit of {} (--prometheus-timeout)",
                            m_base, format_duration(m_report_timeout_us)));
}

PrometheusClient::~PrometheusClient() {
    if (m_curl != nullptr) {
        curl_api().easy_cleanup(static_cast<CURL*>(m_curl));
    }
}

PromAnswer PrometheusClient::curl_post(const std::string& path, const Params& params,
                                       DurationUs timeout_us) {
    const CurlApi& api = curl_api();
    CURL* curl = static_cast<CURL*>(m_curl);
    const std::string form = encode_form(api, curl, params);
    // The label-values endpoint answers GET only (Prometheus 2.42); the query endpoints take a
    // POSTed form, which has no length limit.
    const bool get = path.find("/label/") != std::string::npos;
    const std::string url = m_base + path + (get ? "?" + form : "");
    PromAnswer answer;
    char error[CURL_ERROR_SIZE] = {};
    api.easy_reset(curl);
    api.easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (!get) {
        api.easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
    }
    BodySink sink;
    sink.body = &answer.body;
    sink.server = &m_base;
    api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &append_body);
    api.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, std::max(static_cast<long>(timeout_us / 1000), 1L));
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                    std::clamp(static_cast<long>(timeout_us / 1000), 1L, 10000L));
    // Only the server named: no redirect to another (a hostile server's answer is its own).
    api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(curl, CURLOPT_USERAGENT, "gua-report");
    const CURLcode rc = api.easy_perform(curl);
    if (sink.memory) {
        throw *sink.memory;
    }
    if (sink.too_big) {
        throw Fatal(fmt::format("refused an answer from Prometheus at {}: a body larger than {} "
                                "MiB (the limit of one answer)",
                                m_base, k_prom_max_body_bytes / (1024 * 1024)));
    }
    if (rc == CURLE_OPERATION_TIMEDOUT && timeout_us < m_request_timeout_us) {
        report_timed_out(); // what was left of the report's time ran out
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        throw Fatal(fmt::format("Prometheus at {} did not answer within {} (the limit of one "
                                "request)",
                                m_base, format_duration(timeout_us)));
    }
    if (rc != CURLE_OK) {
        throw Fatal(fmt::format("cannot query Prometheus at {}: {}", m_base,
                                error[0] != '\0' ? error : api.easy_strerror(rc)));
    }
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
    return answer;
}

PromAnswer PrometheusClient::send(const std::string& path, const Params& params) {
    const DurationUs timeout = std::min(time_left(), m_request_timeout_us);
    const auto start = std::chrono::steady_clock::now();
    PromAnswer answer = m_transport ? m_transport(path, params) : curl_post(path, params, timeout);
    if (answer.body.size() > k_prom_max_body_bytes) {
        throw Fatal(fmt::format("refused an answer from Prometheus at {}: a body larger than {} "
                                "MiB (the limit of one answer)",
                                m_base, k_prom_max_body_bytes / (1024 * 1024)));
    }
    if (!m_trace) {
        return answer;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string what;
    for (const auto& [name, value] : params) {
        if (name == "query" || name == "match[]") {
            what = value.size() > 160 ? value.substr(0, 160) + "…" : value;
        }
    }
    fmt::print(stderr, "prometheus: {} at {} {:.0f} ms {} B {}\n", path,
               format_iso8601(wall_now()).substr(11, 8), ms, answer.body.size(), what);
    return answer;
}

void PrometheusClient::query_each(
    const std::string& promql, TimeUs at,
    const std::function<void(PromLabels&, std::optional<double>)>& sink) {
    parse_answer(send("/api/v1/query", {{"query", promql}, {"time", prom_time(at)}}), m_base,
                 [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& points) {
                     sink(labels, points.empty() ? std::nullopt
                                                 : std::optional<double>(points.back().second));
                 });
}

void PrometheusClient::query_range_each(
    const std::string& promql, TimeUs start, TimeUs end, DurationUs step,
    const std::function<void(PromLabels&, std::vector<std::pair<TimeUs, double>>&)>& sink) {
    parse_answer(
        send("/api/v1/query_range", {{"query", promql},
                                     {"start", prom_time(start)},
                                     {"end", prom_time(end)},
                                     {"step", fmt::format("{}", static_cast<double>(step) / 1e6)}}),
        m_base, sink);
}

std::vector<PromSample> PrometheusClient::query(const std::string& promql, TimeUs at) {
    std::vector<PromSample> out;
    query_each(promql, at, [&](PromLabels& labels, std::optional<double> value) {
        if (value) {
            out.push_back(PromSample{std::move(labels), *value});
        }
    });
    return out;
}

std::vector<PromSeries> PrometheusClient::query_range(const std::string& promql, TimeUs start,
                                                      TimeUs end, DurationUs step) {
    step = std::max<DurationUs>(step, k_us_per_ms);
    std::vector<PromSeries> out;
    std::map<std::string, std::size_t> index;
    for (TimeUs chunk = start; chunk <= end; chunk += k_max_points * step) {
        const TimeUs chunk_end = std::min(end, chunk + (k_max_points - 1) * step);
        query_range_each(promql, chunk, chunk_end, step,
                         [&](PromLabels& labels, std::vector<std::pair<TimeUs, double>>& points) {
                             const auto [it, fresh] =
                                 index.try_emplace(label_key(labels), out.size());
                             if (fresh) {
                                 out.push_back(PromSeries{std::move(labels), {}});
                             }
                             auto& values = out[it->second].values;
                             values.insert(values.end(), points.begin(), points.end());
                         });
    }
    return out;
}

std::vector<std::string> PrometheusClient::label_values(const std::string& name,
                                                        const std::vector<std::string>& match,
                                                        TimeUs start, TimeUs end) {
    Params params{{"start", prom_time(start)}, {"end", prom_time(end)}};
    for (const std::string& m : match) {
        params.emplace_back("match[]", m);
    }
    return parse_label_values(send("/api/v1/label/" + name + "/values", params), m_base);
}

void PrometheusClient::parallel(const std::vector<std::function<void(PrometheusClient&)>>& jobs,
                                std::size_t concurrency) {
    if (m_transport || concurrency <= 1 || jobs.size() <= 1) {
        for (const auto& job : jobs) {
            job(*this);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    const auto worker = [&](PrometheusClient& client) {
        for (std::size_t i = next++; i < jobs.size() && !failed; i = next++) {
            try {
                jobs[i](client);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(error_mutex);
                if (!failed.exchange(true)) {
                    first_error = std::current_exception();
                }
            }
        }
    };
    std::vector<std::thread> threads;
    const std::size_t n = std::min(concurrency, jobs.size());
    try {
        for (std::size_t t = 1; t < n; ++t) {
            threads.emplace_back([&] {
                try {
                    PrometheusClient client(m_base, m_deadline, m_report_timeout_us,
                                            m_request_timeout_us);
                    worker(client);
                } catch (...) { // cannot make a handle: the other workers carry on
                    const std::lock_guard<std::mutex> lock(error_mutex);
                    if (!failed.exchange(true)) {
                        first_error = std::current_exception();
                    }
                }
            });
        }
    } catch (const std::system_error&) { // no more threads: the ones started and this one do it
    }
    worker(*this);
    for (std::thread& t : threads) {
        t.join();
    }
    if (first_error) {
        std::rethrow_exception(first_error);
    }
}

void PrometheusClient::query_samples(
    const std::string& promql, TimeUs at,
    const std::function<void(PromLabels&, std::vector<std::pair<TimeUs, double>>&)>& sink) {
    parse_answer(send("/api/v1/query", {{"query", promql}, {"time", prom_time(at)}}), m_base, sink);
}

} // namespace gua::report

// Prometheus HTTP API client: form-encoded POSTs, JSON results, one-line errors.
#include "report/prometheus_api.hpp"

#include "core/fatal.hpp"

#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace gua::report {

namespace {

using nlohmann::json;

constexpr std::int64_t k_max_points = 10000;

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

double parse_value(const json& v) {
    const std::string text = v.get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) {
        throw Fatal("Prometheus returned a sample value that is not a number: " + text);
    }
    return d;
}

TimeUs parse_time(const json& t) {
    return static_cast<TimeUs>(std::llround(t.get<double>() * 1e6));
}

PromLabels labels_of(const json& metric) {
    PromLabels labels;
    for (const auto& [k, v] : metric.items()) {
        labels[k] = v.get<std::string>();
    }
    return labels;
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

PrometheusClient::PrometheusClient(std::string base_url, DurationUs timeout_us)
    : m_base(std::move(base_url)), m_timeout_us(timeout_us), m_curl(curl_easy_init()) {
    while (!m_base.empty() && m_base.back() == '/') {
        m_base.pop_back();
    }
    if (!m_base.starts_with("http://") && !m_base.starts_with("https://")) {
        throw Fatal(fmt::format("--prometheus {}: expected an http:// or https:// URL", m_base),
                    ExitCode::usage);
    }
    if (m_curl == nullptr) {
        throw Fatal("cannot initialise libcurl");
    }
}

PrometheusClient::~PrometheusClient() {
    curl_easy_cleanup(static_cast<CURL*>(m_curl));
}

nlohmann::json PrometheusClient::post(const std::string& path, const std::string& form) {
    CURL* curl = static_cast<CURL*>(m_curl);
    const std::string url = m_base + path;
    std::string body;
    char error[CURL_ERROR_SIZE] = {};
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &append_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(m_timeout_us / 1000));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "gua-report");
    const CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK) {
        throw Fatal(fmt::format("cannot query Prometheus at {}: {}", m_base,
                                error[0] != '\0' ? error : curl_easy_strerror(rc)));
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception&) {
        throw Fatal(fmt::format("Prometheus at {} answered HTTP {} with a body that is not JSON "
                                "(is this the server's root URL?)",
                                m_base, status));
    }
    if (j.value("status", "") != "success") {
        throw Fatal(fmt::format("Prometheus at {} refused a query (HTTP {}): {}: {}", m_base,
                                status, j.value("errorType", "error"), j.value("error", "?")));
    }
    return j;
}

std::vector<PromSample> PrometheusClient::query(const std::string& promql, TimeUs at) {
    CURL* curl = static_cast<CURL*>(m_curl);
    char* q = curl_easy_escape(curl, promql.c_str(), static_cast<int>(promql.size()));
    const std::string form = fmt::format("query={}&time={}", q, prom_time(at));
    curl_free(q);
    const json j = post("/api/v1/query", form);
    std::vector<PromSample> out;
    try {
        for (const json& r : j.at("data").at("result")) {
            out.push_back(PromSample{labels_of(r.at("metric")), parse_value(r.at("value").at(1))});
        }
    } catch (const json::exception& e) {
        throw Fatal(fmt::format("unexpected answer from Prometheus at {}: {}", m_base, e.what()));
    }
    return out;
}

std::vector<PromSeries> PrometheusClient::query_range(const std::string& promql, TimeUs start,
                                                      TimeUs end, DurationUs step) {
    step = std::max<DurationUs>(step, k_us_per_ms);
    CURL* curl = static_cast<CURL*>(m_curl);
    char* q = curl_easy_escape(curl, promql.c_str(), static_cast<int>(promql.size()));
    const std::string escaped = q;
    curl_free(q);
    std::vector<PromSeries> out;
    std::map<std::string, std::size_t> index;
    for (TimeUs chunk = start; chunk <= end; chunk += k_max_points * step) {
        const TimeUs chunk_end = std::min(end, chunk + (k_max_points - 1) * step);
        const json j =
            post("/api/v1/query_range",
                 fmt::format("query={}&start={}&end={}&step={}", escaped, prom_time(chunk),
                             prom_time(chunk_end), static_cast<double>(step) / 1e6));
        try {
            for (const json& r : j.at("data").at("result")) {
                PromLabels labels = labels_of(r.at("metric"));
                const auto [it, fresh] = index.try_emplace(label_key(labels), out.size());
                if (fresh) {
                    out.push_back(PromSeries{std::move(labels), {}});
                }
                for (const json& v : r.at("values")) {
                    out[it->second].values.emplace_back(parse_time(v.at(0)), parse_value(v.at(1)));
                }
            }
        } catch (const json::exception& e) {
            throw Fatal(
                fmt::format("unexpected answer from Prometheus at {}: {}", m_base, e.what()));
        }
    }
    return out;
}

} // namespace gua::report

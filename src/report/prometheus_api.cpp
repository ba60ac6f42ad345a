// Prometheus HTTP API client: form-encoded POSTs, JSON results, one-line errors.
#include "report/prometheus_api.hpp"

#include "core/fatal.hpp"
#include "core/shared_library.hpp"

#define CURL_DISABLE_TYPECHECK // calls go through function pointers
#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

namespace gua::report {

std::string prom_label(const PromLabels& labels, const std::string& name) {
    const auto it = labels.find(name);
    return it != labels.end() ? it->second : std::string();
}

namespace {

/// libcurl's entry points, loaded on first use: only `gua report --prometheus` needs libcurl and
/// its TLS/Kerberos/LDAP dependencies.
struct CurlApi {
    decltype(&curl_easy_init) easy_init = nullptr;
    decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&curl_easy_reset) easy_reset = nullptr;
    decltype(&curl_easy_setopt) easy_setopt = nullptr;
    decltype(&curl_easy_perform) easy_perform = nullptr;
    decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&curl_easy_strerror) easy_strerror = nullptr;
    decltype(&curl_easy_escape) easy_escape = nullptr;
    decltype(&curl_free) free = nullptr;
};

const CurlApi& curl_api() {
    static const CurlApi api = [] {
        const SharedLibrary& lib =
            SharedLibrary::open("libcurl.so.4", "libcurl4", "gua report --prometheus");
        CurlApi a;
        lib.bind(a.easy_init, "curl_easy_init");
        lib.bind(a.easy_cleanup, "curl_easy_cleanup");
        lib.bind(a.easy_reset, "curl_easy_reset");
        lib.bind(a.easy_setopt, "curl_easy_setopt");
        lib.bind(a.easy_perform, "curl_easy_perform");
        lib.bind(a.easy_getinfo, "curl_easy_getinfo");
        lib.bind(a.easy_strerror, "curl_easy_strerror");
        lib.bind(a.easy_escape, "curl_easy_escape");
        lib.bind(a.free, "curl_free");
        return a;
    }();
    return api;
}

using nlohmann::json;

constexpr std::int64_t k_max_points = 10000;

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

/// A sample value; nullopt for Prometheus's NaN and ±Inf, which stand for no number (the sample
/// is then missing, never 0).
std::optional<double> parse_value(const json& v) {
    const std::string text = v.get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) {
        throw Fatal("Prometheus returned a sample value that is not a number: " + text);
    }
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

/// Latest sample time accepted from a server, in seconds (year 5138): later ones are garbage.
constexpr double k_max_time_s = 1e11;

TimeUs parse_time(const json& t) {
    const double s = t.get<double>();
    if (!(s >= 0 && s <= k_max_time_s)) {
        throw Fatal(fmt::format("Prometheus returned a sample time out of range: {}", t.dump()));
    }
    return static_cast<TimeUs>(std::llround(s * 1e6));
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

} // namespace

PrometheusClient::PrometheusClient(std::string base_url, DurationUs timeout_us)
    : m_base(server_root(std::move(base_url))), m_timeout_us(timeout_us) {
    m_curl = curl_api().easy_init();
    if (m_curl == nullptr) {
        throw Fatal("cannot initialise libcurl");
    }
}

PrometheusClient::PrometheusClient(std::string base_url, PromTransport transport)
    : m_base(server_root(std::move(base_url))), m_transport(std::move(transport)) {}

PrometheusClient::~PrometheusClient() {
    if (m_curl != nullptr) {
        curl_api().easy_cleanup(static_cast<CURL*>(m_curl));
    }
}

PromAnswer PrometheusClient::curl_post(const std::string& path, const Params& params) {
    const CurlApi& api = curl_api();
    CURL* curl = static_cast<CURL*>(m_curl);
    std::string form;
    for (const auto& [name, value] : params) {
        char* escaped = api.easy_escape(curl, value.c_str(), static_cast<int>(value.size()));
        if (escaped == nullptr) {
            throw Fatal("cannot encode a Prometheus query (out of memory)");
        }
        form += (form.empty() ? "" : "&") + name + "=" + escaped;
        api.free(escaped);
    }
    const std::string url = m_base + path;
    PromAnswer answer;
    char error[CURL_ERROR_SIZE] = {};
    api.easy_reset(curl);
    api.easy_setopt(curl, CURLOPT_URL, url.c_str());
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
    api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &append_body);
    api.easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(m_timeout_us / 1000));
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(curl, CURLOPT_USERAGENT, "gua-report");
    const CURLcode rc = api.easy_perform(curl);
    if (rc != CURLE_OK) {
        throw Fatal(fmt::format("cannot query Prometheus at {}: {}", m_base,
                                error[0] != '\0' ? error : api.easy_strerror(rc)));
    }
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
    return answer;
}

nlohmann::json PrometheusClient::post(const std::string& path, const Params& params) {
    const PromAnswer answer = m_transport ? m_transport(path, params) : curl_post(path, params);
    json j = json::parse(answer.body, nullptr, false);
    if (j.is_discarded()) {
        throw Fatal(fmt::format("Prometheus at {} answered HTTP {} with a body that is not JSON "
                                "(is this the server's root URL?)",
                                m_base, answer.status));
    }
    if (!j.is_object() || j.value("status", json()) != "success") {
        const auto text = [&j](const char* key, const char* fallback) {
            const auto it = j.is_object() ? j.find(key) : j.end();
            return it != j.end() && it->is_string() ? it->get<std::string>()
                                                    : std::string(fallback);
        };
        throw Fatal(fmt::format("Prometheus at {} refused a query (HTTP {}): {}: {}", m_base,
                                answer.status, text("errorType", "error"), text("error", "?")));
    }
    return j;
}

std::vector<PromSample> PrometheusClient::query(const std::string& promql, TimeUs at) {
    const json j = post("/api/v1/query", {{"query", promql}, {"time", prom_time(at)}});
    std::vector<PromSample> out;
    try {
        for (const json& r : j.at("data").at("result")) {
            if (const std::optional<double> value = parse_value(r.at("value").at(1))) {
                out.push_back(PromSample{labels_of(r.at("metric")), *value});
            }
        }
    } catch (const json::exception& e) {
        throw Fatal(fmt::format("unexpected answer from Prometheus at {}: {}", m_base, e.what()));
    }
    return out;
}

std::vector<PromSeries> PrometheusClient::query_range(const std::string& promql, TimeUs start,
                                                      TimeUs end, DurationUs step) {
    step = std::max<DurationUs>(step, k_us_per_ms);
    std::vector<PromSeries> out;
    std::map<std::string, std::size_t> index;
    for (TimeUs chunk = start; chunk <= end; chunk += k_max_points * step) {
        const TimeUs chunk_end = std::min(end, chunk + (k_max_points - 1) * step);
        const json j = post("/api/v1/query_range",
                            {{"query", promql},
                             {"start", prom_time(chunk)},
                             {"end", prom_time(chunk_end)},
                             {"step", fmt::format("{}", static_cast<double>(step) / 1e6)}});
        try {
            for (const json& r : j.at("data").at("result")) {
                PromLabels labels = labels_of(r.at("metric"));
                const auto [it, fresh] = index.try_emplace(label_key(labels), out.size());
                if (fresh) {
                    out.push_back(PromSeries{std::move(labels), {}});
                }
                for (const json& v : r.at("values")) {
                    const TimeUs t = parse_time(v.at(0));
                    if (const std::optional<double> value = parse_value(v.at(1))) {
                        out[it->second].values.emplace_back(t, *value);
                    }
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

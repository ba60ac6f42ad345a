// SPDX-License-Identifier: Apache-2.0
// PrometheusClient and the fleet reports on hostile or unusual server answers, served through the
// client's transport seam (the regressions fuzz_prometheus found, and Prometheus's NaN and ±Inf).
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {
namespace prometheus_answers_test { // named after the file: unique in a unity batch

using nlohmann::json;

/// A client whose every answer is `body` (HTTP 200), or `range_body` for range queries when
/// set; counts the requests.
struct Canned {
    explicit Canned(std::string answer, std::string range_answer = "")
        : body(std::move(answer)), range_body(std::move(range_answer)) {}
    std::string body;
    std::string range_body;
    int requests = 0;
    PrometheusClient client() {
        return PrometheusClient("http://prometheus.test:9090",
                                [this](const std::string& path,
                                       const std::vector<std::pair<std::string, std::string>>&) {
                                    ++requests;
                                    const bool range =
                                        path.ends_with("query_range") && !range_body.empty();
                                    return PromAnswer{200, range ? range_body : body};
                                });
    }
};

std::string vector_answer(const std::vector<std::string>& values) {
    json result = json::array();
    for (std::size_t i = 0; i < values.size(); ++i) {
        result.push_back(
            {{"metric", {{"gpu", std::to_string(i)}}}, {"value", {1767225600.5, values[i]}}});
    }
    return json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}
        .dump();
}

std::string matrix_answer(const json& values) {
    return json{{"status", "success"},
                {"data",
                 {{"resultType", "matrix"},
                  {"result", {{{"metric", {{"gpu", "0"}}}, {"values", values}}}}}}}
        .dump();
}

std::string fatal_message(const std::function<void()>& call) {
    try {
        call();
    } catch (const Fatal& e) {
        return e.what();
    }
    return "(no error)";
}

// NaN, ±Inf and negative values used to be left out (or read as 0): no query gua sends can
// answer them, so they are refused in one line naming the series.
TEST(PrometheusAnswers, NonFiniteAndNegativeValuesAreRefusedNamingTheSeries) {
    for (const std::string v : {"NaN", "+Inf", "-Inf", "-0.5", "12abc"}) {
        Canned server(vector_answer({"12.5", v}));
        PrometheusClient prom = server.client();
        const std::string message =
            fatal_message([&] { prom.query("up", 1767225600LL * k_us_per_second); });
        EXPECT_TRUE(message.starts_with("refused an answer from Prometheus at "
                                        "http://prometheus.test:9090: series {gpu=\"1\"}: "))
            << message;
        EXPECT_NE(message.find(v), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    Canned server(matrix_answer({{1767225600, "1"}, {1767225615, "NaN"}}));
    PrometheusClient prom = server.client();
    EXPECT_TRUE(fatal_message([&] {
                    prom.query_range("up", 1767225600LL * k_us_per_second,
                                     1767225630LL * k_us_per_second, 15 * k_us_per_second);
                }).starts_with("refused an answer from Prometheus at "));
    server.body = vector_answer({"12.5", "0"});
    const std::vector<PromSample> samples = prom.query("up", 1767225600LL * k_us_per_second);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].value, 12.5);
    EXPECT_EQ(samples[1].value, 0);
}

// The same series twice in one answer used to count twice.
TEST(PrometheusAnswers, ASeriesTwiceInOneAnswerIsRefused) {
    json result = json::array();
    for (const char* v : {"1", "2"}) {
        result.push_back({{"metric", {{"__name__", "m"}, {"gpu", "0"}}}, {"value", {1, v}}});
    }
    Canned server(
        json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}
            .dump());
    PrometheusClient prom = server.client();
    EXPECT_EQ(fatal_message([&] { prom.query("m", 0); }),
              "refused an answer from Prometheus at http://prometheus.test:9090: series "
              "m{gpu=\"0\"}: the same series twice in one answer");
}

// Labels, series and points are bounded; a label value shows escaped and shortened.
TEST(PrometheusAnswers, AnswersPastTheLimitsAreRefused) {
    const auto one = [](const json& metric, const json& values) {
        return json{
            {"status", "success"},
            {"data",
             {{"resultType", "matrix"}, {"result", {{{"metric", metric}, {"values", values}}}}}}}
            .dump();
    };
    json points = json::array();
    for (std::size_t i = 0; i <= k_prom_max_points; ++i) {
        points.push_back({static_cast<double>(i), "1"});
    }
    json labels = json::object();
    for (std::size_t i = 0; i <= k_prom_max_labels; ++i) {
        labels["l" + std::to_string(i)] = "v";
    }
    const std::vector<std::pair<std::string, std::string>> cases{
        {one({{"a", std::string(k_prom_max_label_bytes + 1, 'x')}}, {{1, "1"}}),
         "series {}: a label a longer than 4096 bytes"},
        {one(labels, {{1, "1"}}), "more than 64 labels"},
        {one({{"a", "b\n\x1b[31m"}}, points),
         "series {a=\"b\\x0a\\x1b[31m\"}: more than 11000 points in one series"},
    };
    for (const auto& [body, expected] : cases) {
        Canned server(body);
        PrometheusClient prom = server.client();
        const std::string message = fatal_message([&] { prom.query_range("m", 0, 15, 15); });
        EXPECT_NE(message.find(expected), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

// Found by fuzz_prometheus: a sample time of 1.7e123 s became a garbage microsecond count and
// overflowed (undefined behaviour) in the heatmap's quarter-hour arithmetic.
TEST(PrometheusAnswers, ASampleTimeOutOfRangeIsAOneLineError) {
    for (const json& t : {json(1.767e123), json(-5.0), json(1e300)}) {
        Canned server(matrix_answer({{t, "87"}}));
        PrometheusClient prom = server.client();
        const std::string message = fatal_message([&] {
            prom.query_range("DCGM_FI_DEV_GPU_UTIL", 0, 30 * k_us_per_second, 15 * k_us_per_second);
        });
        EXPECT_TRUE(message.starts_with("Prometheus returned a sample time out of range: "))
            << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
}

// A body that is JSON but not an object (or whose error fields are not text) used to escape as
// nlohmann's type_error instead of a one-line Fatal naming the server.
TEST(PrometheusAnswers, AnswersThatAreNotObjectsAreRefusedInOneLine) {
    for (const std::string& body :
         {std::string("[]"), std::string("\"success\""),
          std::string(R"({"status":"error","errorType":7,"error":[]})")}) {
        Canned server(body);
        PrometheusClient prom = server.client();
        const std::string message = fatal_message([&] { prom.query("up", 0); });
        EXPECT_TRUE(message.starts_with("Prometheus at http://prometheus.test:9090 refused a query "
                                        "(HTTP 200): error: ?"))
            << body << ": " << message;
    }
}

/// A vector answer of every counter family the gua source reads, for host "h:1", each series at
/// `value`, and of the daemon's start time (the same at every lookup).
std::string counters_answer(const std::string& value) {
    json result = json::array();
    const auto add = [&](json metric, const std::string& v) {
        metric["instance"] = "h:1";
        result.push_back({{"metric", metric}, {"value", {1767225600.5, v}}});
    };
    add({{"__name__", "gua_daemon_start_time_seconds"}}, "1767000000");
    for (const char* state : {"active", "idle_held", "truly_idle"}) {
        add({{"__name__", "gua_gpu_seconds_total"},
             {"gpu", "0"},
             {"uuid", "GPU-1"},
             {"model", "NVIDIA A100-SXM4-80GB"},
             {"state", state}},
            value);
        add({{"__name__", "gua_identity_gpu_seconds_total"}, {"user", "alice"}, {"state", state}},
            value);
    }
    add({{"__name__", "gua_gpu_card_ticks_total"}, {"gpu", "0"}, {"uuid", "GPU-1"}}, value);
    add({{"__name__", "gua_efficiency_seconds_total"}, {"gpu", "0"}, {"bucket", "idle"}}, value);
    add({{"__name__", "gua_identity_card_ticks_total"}, {"user", "alice"}}, value);
    add({{"__name__", "gua_identity_idle_held_bytes_seconds_total"}, {"user", "alice"}}, value);
    return json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}
        .dump();
}

// The fleet report on counters no real fleet has (10^300 seconds at the window's end): refused
// naming the series, never a figure (it used to report them, bounded at 10^10 s a series).
TEST(PrometheusAnswers, AbsurdCounterValuesAreRefused) {
    const TimeUs from = 1767225600LL * k_us_per_second;
    BuildOptions options;
    options.from = from;
    options.to = from + k_us_per_day;
    options.window_label = "1d";
    const TimeZone tz = TimeZone::load("UTC").value();
    FleetOptions fleet;
    for (const char* source : {"gua", "dcgm"}) {
        fleet.source = source;
        int requests = 0;
        // The counters read 0 at the window's start and 10^300 at its end (and everywhere
        // else); the host list is one host.
        PrometheusClient prom(
            "http://prometheus.test:9090",
            [&](const std::string& path,
                const std::vector<std::pair<std::string, std::string>>& params) {
                ++requests;
                const std::map<std::string, std::string> p(params.begin(), params.end());
                if (path.find("/label/") != std::string::npos) {
                    return PromAnswer{200, R"({"status":"success","data":["h:1"]})"};
                }
                if (path.ends_with("query_range")) {
                    return PromAnswer{
                        200, matrix_answer({{1767225600, "1e300"}, {1767225615, "1e300"}})};
                }
                const bool at_start = p.at("time") == "1767225600.000";
                return PromAnswer{200, fleet.source == "gua"
                                           ? counters_answer(at_start ? "0" : "1e300")
                                           : vector_answer({"1e300", "1e300", "1e300"})};
            });
        fleet.url = prom.url();
        const std::string message = fatal_message([&] {
            fleet.source == "dcgm" ? build_dcgm_report(prom, fleet, options, tz)
                                   : build_prometheus_report(prom, fleet, options, tz);
        });
        EXPECT_GT(requests, 0);
        EXPECT_TRUE(message.starts_with("refused the answers of Prometheus at "
                                        "http://prometheus.test:9090: series "))
            << source << ": " << message;
        EXPECT_NE(message.find(fleet.source == "gua" ? "gua_gpu_seconds_total{"
                                                     : "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"}"),
                  std::string::npos)
            << message;
    }
}

// Each series is handed over as it is parsed; a series whose labels are not text, or a result
// that is not a list of series, is a one-line error naming the server.
TEST(PrometheusAnswers, MalformedSeriesAreRefusedInOneLine) {
    for (const std::string& body :
         {std::string(
              R"({"status":"success","data":{"result":[{"metric":{"gpu":0},"value":[1,"2"]}]}})"),
          std::string(R"({"status":"success","data":{"result":["x"]}})"),
          std::string(R"({"status":"success","data":{"result":[{"metric":{}}]}})"),
          std::string(R"({"status":"success","data":{"result":[{"metric":{},"value":[1,2]}]}})")}) {
        Canned server(body);
        PrometheusClient prom = server.client();
        const std::string message = fatal_message([&] { prom.query("up", 0); });
        EXPECT_TRUE(message.starts_with("unexpected answer from Prometheus at "
                                        "http://prometheus.test:9090: "))
            << body << ": " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
}

TEST(PrometheusAnswers, LabelValuesAreAListOfText) {
    Canned server(R"({"status":"success","data":["b:1","a:1"]})");
    PrometheusClient prom = server.client();
    EXPECT_EQ(prom.label_values("instance", {"up"}, 0, k_us_per_second),
              (std::vector<std::string>{"b:1", "a:1"}));
    server.body = R"({"status":"error","errorType":"bad_data","error":"1:3: parse error"})";
    EXPECT_EQ(fatal_message([&] { prom.label_values("instance", {"up{"}, 0, 1); }),
              "Prometheus at http://prometheus.test:9090 refused a query (HTTP 200): bad_data: "
              "1:3: parse error");
    server.body = R"({"status":"success","data":[1]})";
    EXPECT_TRUE(fatal_message([&] {
                    prom.label_values("instance", {"up"}, 0, 1);
                }).starts_with("unexpected answer from Prometheus at "));
}

} // namespace prometheus_answers_test
} // namespace gua::report

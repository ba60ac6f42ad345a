// PrometheusClient and the fleet reports on hostile or unusual server answers, served through the
// client's transport seam (the regressions fuzz_prometheus found, and Prometheus's NaN and ±Inf).
#include "core/fatal.hpp"
#include "report/fleet.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
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

TEST(PrometheusAnswers, NanAndInfinityAreMissingNotNumbers) {
    Canned server(vector_answer({"12.5", "NaN", "+Inf", "-Inf", "0"}));
    PrometheusClient prom = server.client();
    const std::vector<PromSample> samples = prom.query("up", 1767225600LL * k_us_per_second);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].labels.at("gpu"), "0");
    EXPECT_EQ(samples[0].value, 12.5);
    EXPECT_EQ(samples[1].labels.at("gpu"), "4");
    EXPECT_EQ(samples[1].value, 0);

    server.body = matrix_answer({{1767225600, "1"}, {1767225615, "NaN"}, {1767225630, "3"}});
    const std::vector<PromSeries> series = prom.query_range(
        "up", 1767225600LL * k_us_per_second, 1767225630LL * k_us_per_second, 15 * k_us_per_second);
    ASSERT_EQ(series.size(), 1u);
    ASSERT_EQ(series[0].values.size(), 2u);
    EXPECT_EQ(series[0].values[1].first, 1767225630LL * k_us_per_second);
    EXPECT_EQ(series[0].values[1].second, 3.0);
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

// The fleet report on counters no real fleet has (10^300 seconds, in every query): finite
// figures, bounded per series, and no overflow in the sums (UBSan would stop the test).
TEST(PrometheusAnswers, AbsurdCounterValuesStayBounded) {
    const TimeUs from = 1767225600LL * k_us_per_second;
    BuildOptions options;
    options.from = from;
    options.to = from + k_us_per_day;
    options.window_label = "1d";
    const TimeZone tz = TimeZone::load("UTC").value();
    FleetOptions fleet;
    for (const char* source : {"gua", "dcgm"}) {
        fleet.source = source;
        Canned server(vector_answer({"1e300", "1e300", "1e300"}),
                      matrix_answer({{1767225600, "1e300"}, {1767225615, "1e300"}}));
        PrometheusClient prom = server.client();
        fleet.url = prom.url();
        const ReportModel m = fleet.source == "dcgm"
                                  ? build_dcgm_report(prom, fleet, options, tz)
                                  : build_prometheus_report(prom, fleet, options, tz);
        EXPECT_GT(server.requests, 0);
        EXPECT_TRUE(std::isfinite(m.observed_card_hours)) << source;
        for (const GpuRow& g : m.gpus) {
            const double hours = g.shares.active_hours + g.shares.idle_held_hours +
                                 g.shares.truly_idle_hours + g.shares.unmeasured_hours;
            EXPECT_TRUE(std::isfinite(hours)) << source;
            EXPECT_LE(hours, 4 * 1e10 / 3600) << source << ": at most 10^10 s per series";
        }
    }
}

} // namespace prometheus_answers_test
} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// Reading gua's counters at the edges of a window: telescope() on its own, and read_counters()
// against a simulated server whose counters are known functions of time (one host's daemon
// runs throughout, one restarts, one starts over on a fresh database inside the window, one goes
// away for good).
#include "prometheus/counters.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <regex>

namespace gua::report {
namespace prometheus_counters_test { // named after the file: unique in a unity batch

using nlohmann::json;

TEST(PrometheusCounters, TelescopeTakesEndMinusStart) {
    const std::map<std::string, double> start{{"a", 10}, {"b", 5}};
    const std::map<std::string, double> end{{"a", 25}, {"b", 5}, {"c", 7}};
    const auto d = telescope(start, end, 100);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, (std::map<std::string, double>{{"a", 15}, {"b", 0}, {"c", 7}}));
}

TEST(PrometheusCounters, TelescopeRefusesWhatItCannotKnow) {
    // A series that ended: its last value is not at either edge.
    EXPECT_FALSE(telescope({{"a", 1}, {"b", 2}}, {{"a", 3}}, 0));
    // A decrease: the counter started over somewhere inside.
    EXPECT_FALSE(telescope({{"a", 10}}, {{"a", 3}}, 0));
    // An appeared series with more than the chunk allows did not start from zero.
    EXPECT_FALSE(telescope({}, {{"a", 3601}}, 3600));
    EXPECT_TRUE(telescope({}, {{"a", 3601}}, 0)); // 0: no bound
}

constexpr DurationUs s = k_us_per_second;
constexpr TimeUs t0 = 1793059200LL * s; // 2026-10-27T00:00:00Z, the window's start
constexpr TimeUs t_end = t0 + 5 * k_us_per_day;
constexpr TimeUs reset_at = t0 + 2 * k_us_per_day + 12 * k_us_per_hour; // host b's new database

constexpr TimeUs restart_at = t0 + k_us_per_day + 12 * k_us_per_hour; // host c's restart

// Host d goes away for good: its last scrape (every 30 s, 10 s past the half minute) is 10 s
// before it stops; lookups see nothing of it 5 minutes (the lookback) after that.
constexpr TimeUs gone_at = t0 + 3 * k_us_per_day + 7 * k_us_per_hour + 20 * s;
constexpr TimeUs last_scrape_of_d = gone_at - 10 * s;

/// The last scrape at or before `at` (every 30 s, 10 s past the half minute), none of host d
/// after it went away.
TimeUs scraped_at(const std::string& host, TimeUs at) {
    const TimeUs scraped = (at - 10 * s) / (30 * s) * (30 * s) + 10 * s;
    return host == "d:1" ? std::min(scraped, last_scrape_of_d) : scraped;
}

/// Whether an instant lookup at `at` sees `host` (host d: up to 5 minutes after its last scrape).
bool visible(const std::string& host, TimeUs at) {
    return host != "d:1" || at <= last_scrape_of_d + 5 * k_us_per_minute;
}

/// The simulated fleet: host a's card counts 0.5 s a second since t0 − 1 day (1 s a second in
/// the window's last hour), and so does host c's, whose daemon restarts at restart_at (its
/// counters carry over); host b's counts 0.25 s a second, starting over from 0 at reset_at (a
/// new daemon start time and a new database). Host d counts 0.5 s a second until it goes away.
double seconds_at(const std::string& host, TimeUs t) {
    const double since = static_cast<double>(t - (t0 - k_us_per_day)) / 1e6;
    if (host == "a:1") { // busy all the time in its last hour
        return 0.5 * since +
               0.5 * std::max(0.0, static_cast<double>(t - (t_end - k_us_per_hour)) / 1e6);
    }
    if (host == "c:1" || host == "d:1") {
        return 0.5 * since;
    }
    return t < reset_at ? 0.25 * since : 0.25 * static_cast<double>(t - reset_at) / 1e6;
}

/// The daemons' start time (Unix seconds): a day before the window, or the restart.
double start_time_at(const std::string& host, TimeUs t) {
    const TimeUs restart = host == "c:1"   ? restart_at
                           : host == "b:1" ? reset_at
                                           : t_end + k_us_per_day;
    return static_cast<double>(t >= restart ? restart : t0 - k_us_per_day) / 1e6;
}

std::vector<std::string> hosts_in(const std::string& query) {
    std::smatch m;
    std::vector<std::string> out;
    if (std::regex_search(query, m, std::regex(R"(instance="([^"]*)\")"))) {
        out.push_back(m[1]);
    } else if (std::regex_search(query, m, std::regex(R"(instance=~"([^"]*)\")"))) {
        const std::string list = std::regex_replace(std::string(m[1]), std::regex(R"(\\\\)"), "");
        for (std::size_t at = 0; at <= list.size();) {
            const std::size_t bar = std::min(list.find('|', at), list.size());
            out.push_back(list.substr(at, bar - at));
            at = bar + 1;
        }
    }
    return out;
}

json vector_of(const std::vector<std::pair<json, double>>& series, double at_s) {
    json result = json::array();
    for (const auto& [metric, value] : series) {
        result.push_back({{"metric", metric}, {"value", {at_s, fmt::format("{}", value)}}});
    }
    return {{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}};
}

struct FakeServer {
    std::vector<std::string> scans;   ///< the hosts of each increase() query, joined
    std::vector<std::string> lookups; ///< the hosts and time of each lookup of every family
    std::vector<std::string> lasts;   ///< the hosts and time of each last-values lookup
    PrometheusClient client() {
        return PrometheusClient("http://prometheus.test:9090", [this](
                                                                   const std::string& path,
                                                                   const std::vector<std::pair<
                                                                       std::string, std::string>>&
                                                                       params) {
            std::map<std::string, std::string> p(params.begin(), params.end());
            if (path.find("/label/") != std::string::npos) {
                return PromAnswer{200, R"({"status":"success","data":["a:1","b:1","c:1","d:1"]})"};
            }
            const std::string& q = p["query"];
            const double at_s = std::stod(p["time"]);
            const TimeUs at = std::llround(at_s * 1e6);
            std::vector<std::pair<json, double>> out;
            if (q.starts_with("max(count_over_time")) {
                out.push_back({json::object(), 120}); // a sample every 30 s
            } else if (q.starts_with("max by (instance) (gua_daemon_start_time_seconds")) {
                for (const std::string& h : hosts_in(q)) {
                    if (visible(h, at)) {
                        out.push_back({{{"instance", h}}, start_time_at(h, at)});
                    }
                }
            } else if (q.starts_with("sum by (__name__")) {
                // Scraped every 30 s, 10 s past the half minute: the lookup sees the last
                // scrape, and says when it was.
                for (const std::string& h : hosts_in(q)) {
                    if (!visible(h, at)) {
                        continue;
                    }
                    const TimeUs scraped = scraped_at(h, at);
                    lookups.push_back(fmt::format("{} +{}", h, (at - t0) / s));
                    out.push_back({{{"gua_sample_time", "1"}, {"instance", h}},
                                   static_cast<double>(scraped) / 1e6});
                    out.push_back({{{"__name__", "gua_daemon_start_time_seconds"}, {"instance", h}},
                                   start_time_at(h, scraped)});
                    out.push_back({{{"__name__", "gua_gpu_seconds_total"},
                                    {"instance", h},
                                    {"gpu", "0"},
                                    {"state", "active"}},
                                   seconds_at(h, scraped)});
                }
            } else if (q.find("last_over_time(") != std::string::npos) {
                // The last sample of each host in the range, of each family.
                std::smatch m;
                EXPECT_TRUE(std::regex_search(q, m, std::regex(R"(\[(\d+)ms\])")));
                const TimeUs from = at - std::stoll(m[1]) * k_us_per_ms;
                for (const std::string& h : hosts_in(q)) {
                    const TimeUs scraped = scraped_at(h, at);
                    if (scraped <= from) {
                        continue;
                    }
                    lasts.push_back(fmt::format("{} +{}", h, (at - t0) / s));
                    out.push_back(
                        {{{"gua_family", "gua_daemon_start_time_seconds"}, {"instance", h}},
                         start_time_at(h, scraped)});
                    out.push_back({{{"gua_family", "gua_gpu_seconds_total"},
                                    {"instance", h},
                                    {"gpu", "0"},
                                    {"state", "active"}},
                                   seconds_at(h, scraped)});
                }
            } else if (q.find("increase(") != std::string::npos) {
                std::smatch m;
                EXPECT_TRUE(std::regex_search(q, m, std::regex(R"(\[(\d+)ms\])")));
                const TimeUs from = at - std::stoll(m[1]) * k_us_per_ms;
                std::string hosts;
                for (const std::string& h : hosts_in(q)) {
                    hosts += h + " ";
                    // The exact increase: across host b's reset, what it counted before
                    // plus what it counted after.
                    double inc = seconds_at(h, at) - seconds_at(h, from);
                    if (h == "b:1" && from < reset_at && at >= reset_at) {
                        inc = seconds_at(h, reset_at - 1) - seconds_at(h, from) + seconds_at(h, at);
                    }
                    out.push_back({{{"gua_family", "gua_gpu_seconds_total"},
                                    {"instance", h},
                                    {"gpu", "0"},
                                    {"state", "active"}},
                                   inc});
                }
                scans.push_back(hosts + fmt::format("{}", (at - from) / s));
            }
            return PromAnswer{200, vector_of(out, at_s).dump()};
        });
    }
};

TEST(PrometheusCounters, OnlyTheDayOfANewDatabaseIsReadInFull) {
    FakeServer server;
    PrometheusClient prom = server.client();
    const CounterTotals totals =
        read_counters(prom, CounterQuery{"instance",
                                         t0,
                                         t_end,
                                         {{"gua_gpu_seconds_total", {"gpu", "state"}, 1.0, false}},
                                         {},
                                         PromLimits{},
                                         "gua_daemon_start_time_seconds"});
    EXPECT_EQ(totals.hosts, (std::vector<std::string>{"a:1", "b:1", "c:1", "d:1"}));
    EXPECT_EQ(totals.sample_interval_us, 30 * s);
    EXPECT_EQ(totals.unstable, (std::vector<std::string>{"b:1", "c:1", "d:1"}));
    EXPECT_EQ(totals.gone_at_end, (std::vector<std::string>{"d:1"}));
    EXPECT_EQ(totals.went_down, (std::vector<std::string>{"b:1"}));
    EXPECT_EQ(totals.full_reads, 1u);
    // Every family of every host at the window's edges and a minute later (two scrapes, to
    // interpolate to the edge); hosts b and c also at the two ends of the day their daemon
    // restarted (the days before and after are one chunk each) and a minute after the restart
    // (to tell whether the counters carried over); host d where it was last seen (the day it
    // went away starts at +259200) and at the next day, where it was not.
    std::sort(server.lookups.begin(), server.lookups.end());
    EXPECT_EQ(server.lookups,
              (std::vector<std::string>{"a:1 +0",      "a:1 +432000", "a:1 +432060", "a:1 +60",
                                        "b:1 +0",      "b:1 +172800", "b:1 +216060", "b:1 +259200",
                                        "b:1 +432000", "b:1 +432060", "b:1 +60",     "c:1 +0",
                                        "c:1 +129660", "c:1 +172800", "c:1 +432000", "c:1 +432060",
                                        "c:1 +60",     "c:1 +86400",  "d:1 +0",      "d:1 +259200",
                                        "d:1 +60"}));
    // Host d's last values on the day it went away, at that day's end.
    EXPECT_EQ(server.lasts, (std::vector<std::string>{"d:1 +345600"}));
    // Read in full: host b's third day (its counters went down), nothing of host a, nothing of
    // host c (its counters carried over the restart) and nothing of host d (its counters
    // stopped where it was last seen).
    EXPECT_EQ(server.scans, (std::vector<std::string>{"b:1 86400"}));
    const std::vector<PromSample>& got = totals.increase.at("gua_gpu_seconds_total");
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(prom_label(got[0].labels, "instance"), "a:1");
    // Without bringing the values to the edges, 20 s at 0.5 s a second would be counted before the
    // window and 20 s at 1 s a second left out at its end.
    EXPECT_NEAR(got[0].value, 0.5 * 5 * 86400 + 0.5 * 3600, 1e-6);
    EXPECT_EQ(prom_label(got[1].labels, "instance"), "b:1");
    // Counted: 2.5 days at 0.25 before the reset, 2.5 days at 0.25 after; the values read 20 s
    // before each edge are brought to it along the next scrape's.
    EXPECT_NEAR(got[1].value, 0.25 * 5 * 86400, 1e-3);
    EXPECT_EQ(prom_label(got[2].labels, "instance"), "c:1");
    EXPECT_NEAR(got[2].value, 0.5 * 5 * 86400, 1e-6);
    // Host d: from the window's start to its last scrape, not extrapolated past it.
    EXPECT_EQ(prom_label(got[3].labels, "instance"), "d:1");
    EXPECT_NEAR(got[3].value, 0.5 * static_cast<double>(last_scrape_of_d - t0) / 1e6, 1e-6);
}

TEST(PrometheusCounters, StepIncreasesFromEachHostsSums) {
    // Points: the window's edges (00:07, 01:00) and the quarter hours inside it.
    const TimeUs from = t0 + 7 * k_us_per_minute;
    const TimeUs to = t0 + k_us_per_hour;
    const TimeUs q = 15 * k_us_per_minute;
    // Host a: steady, not seen at 00:30, its counter starts over before 01:00 (10 is at most
    // 2 a second since 00:45: counted from zero). Host b: appears at 00:15 with 200 (counted
    // since 00:07), then drops to 4,000,000 (more than 2 a second: counted as 0).
    const std::map<std::string, std::map<TimeUs, double>> sums{
        {"a:1", {{from, 100}, {t0 + q, 580}, {t0 + 3 * q, 2380}, {to, 10}}},
        {"b:1", {{t0 + q, 200}, {t0 + 2 * q, 5000000}, {t0 + 3 * q, 4000000}, {to, 4000900}}}};
    int requests = 0;
    PrometheusClient prom(
        "http://prometheus.test:9090",
        [&](const std::string& path,
            const std::vector<std::pair<std::string, std::string>>& params) {
            ++requests;
            std::map<std::string, std::string> p(params.begin(), params.end());
            EXPECT_EQ(p["query"], R"(sum by (instance) (x{instance=~"a:1|b:1"}))");
            json result = json::array();
            if (path.ends_with("query_range")) {
                EXPECT_EQ(p["start"], fmt::format("{}.000", (t0 + q) / s));
                EXPECT_EQ(p["end"], fmt::format("{}.000", (t0 + 3 * q) / s));
                EXPECT_EQ(p["step"], "900");
                for (const auto& [host, values] : sums) {
                    json points = json::array();
                    for (const auto& [t, v] : values) {
                        if (t > from && t < to) {
                            points.push_back({static_cast<double>(t) / 1e6, fmt::format("{}", v)});
                        }
                    }
                    result.push_back({{"metric", {{"instance", host}}}, {"values", points}});
                }
                return PromAnswer{200,
                                  json{{"status", "success"},
                                       {"data", {{"resultType", "matrix"}, {"result", result}}}}
                                      .dump()};
            }
            const TimeUs at = std::llround(std::stod(p["time"]) * 1e6);
            std::vector<std::pair<json, double>> out;
            for (const auto& [host, values] : sums) {
                if (const auto it = values.find(at); it != values.end()) {
                    out.push_back({{{"instance", host}}, it->second});
                }
            }
            return PromAnswer{200, vector_of(out, static_cast<double>(at) / 1e6).dump()};
        });
    std::map<std::pair<std::string, TimeUs>, double> got;
    PromLimits limits; // one request at a time: both hosts in one batch
    limits.concurrency = 1;
    read_step_increases(prom, HostSet{"instance", {"a:1", "b:1"}, 1, 30 * s, limits},
                        StepQuery{"sum by (instance) (x{{HOSTS}})", "", from, to, q, 2.0},
                        [&](TimeUs segment, const PromLabels& labels, double v) {
                            got[{prom_label(labels, "instance"), segment}] += v;
                        });
    EXPECT_EQ(requests, 3); // from, the quarter hours, to
    const std::map<std::pair<std::string, TimeUs>, double> expected{
        {{"a:1", from}, 480},      {{"a:1", t0 + q}, 900},    {{"a:1", t0 + 2 * q}, 900},
        {{"a:1", t0 + 3 * q}, 10}, {{"b:1", from}, 200},      {{"b:1", t0 + q}, 4999800},
        {{"b:1", t0 + 2 * q}, 0},  {{"b:1", t0 + 3 * q}, 900}};
    EXPECT_EQ(got, expected);
}

TEST(PrometheusCounters, StepIncreasesThroughADropInsideAStep) {
    // Quarter hours from 00:00 to 01:00. Between 00:15 and 00:30 the host's counters reach 1,800
    // and start over (a new database): 300 at 00:30.
    const TimeUs q = 15 * k_us_per_minute;
    const std::map<TimeUs, std::pair<double, double>> at{// time → (last, highest in the step)
                                                         {t0, {1000, 1000}},
                                                         {t0 + q, {1500, 1500}},
                                                         {t0 + 2 * q, {300, 1800}},
                                                         {t0 + 3 * q, {400, 400}},
                                                         {t0 + 4 * q, {900, 900}}};
    PrometheusClient prom(
        "http://prometheus.test:9090",
        [&](const std::string& path,
            const std::vector<std::pair<std::string, std::string>>& params) {
            std::map<std::string, std::string> p(params.begin(), params.end());
            const bool peak = p["query"].starts_with("peak");
            if (path.ends_with("query_range")) {
                json points = json::array();
                for (const auto& [t, v] : at) {
                    if (t > t0 && t < t0 + 4 * q) {
                        points.push_back({static_cast<double>(t) / 1e6,
                                          fmt::format("{}", peak ? v.second : v.first)});
                    }
                }
                return PromAnswer{
                    200,
                    json{{"status", "success"},
                         {"data",
                          {{"resultType", "matrix"},
                           {"result", {{{"metric", {{"instance", "a:1"}}}, {"values", points}}}}}}}
                        .dump()};
            }
            const TimeUs t = std::llround(std::stod(p["time"]) * 1e6);
            const auto& v = at.at(t);
            return PromAnswer{200, vector_of({{{{"instance", "a:1"}}, peak ? v.second : v.first}},
                                             static_cast<double>(t) / 1e6)
                                       .dump()};
        });
    std::map<TimeUs, double> got;
    read_step_increases(prom, HostSet{"instance", {"a:1"}, 1, 30 * s, PromLimits{}},
                        StepQuery{"last{{HOSTS}}", "peak{{HOSTS}}", t0, t0 + 4 * q, q, 2.0},
                        [&](TimeUs segment, const PromLabels&, double v) { got[segment] += v; });
    // 00:15–00:30: 300 up to the drop, then 300 from zero (at most 2 a second: it can be).
    EXPECT_EQ(got, (std::map<TimeUs, double>{
                       {t0, 500}, {t0 + q, 600}, {t0 + 2 * q, 100}, {t0 + 3 * q, 500}}));
}

} // namespace prometheus_counters_test
} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The fleet view's reader (src/fleet/now_read.cpp) on a canned Prometheus through the client's
// transport seam: a healthy host, one scraped but no longer ticking (stale), one whose scrape fails
// (down) and one not scraped within the window — each judged as such and never shown as idle — and
// the one-line error for a server without gua series.
#include "core/fatal.hpp"
#include "fleet/now.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gua::report::fleet_now_read_test {

using nlohmann::json;

constexpr double k_now_s = 1767225600; // 2026-01-01T00:00:00Z
constexpr TimeUs k_now = static_cast<TimeUs>(k_now_s) * k_us_per_second;

json labels(const std::string& host, const json& more = json::object()) {
    json l = {{"instance", host}, {"job", "gua"}};
    l.update(more);
    return l;
}

json answer(const std::string& type, const json& result) {
    return {{"status", "success"}, {"data", {{"resultType", type}, {"result", result}}}};
}

/// Instant values: (labels, value) pairs.
json vector_of(const std::vector<std::pair<json, double>>& series) {
    json result = json::array();
    for (const auto& [l, v] : series) {
        result.push_back({{"metric", l}, {"value", {k_now_s, std::to_string(v)}}});
    }
    return answer("vector", result);
}

/// Raw samples every second ending `end_ago_s` before now: value start + step × i.
json samples_of(const json& l, double start, double step, int count, double end_ago_s) {
    json values = json::array();
    for (int i = 0; i < count; ++i) {
        const double t = k_now_s - end_ago_s - (count - 1 - i);
        values.push_back({t, std::to_string(start + step * i)});
    }
    return {{"metric", l}, {"values", values}};
}

/// The fleet: ok (ticking, GPU 0 idle-held by alice for 5 s of samples), stale (scraped, but its
/// last tick 2 minutes old and its counters still), down (up 0), gone (last scraped an hour ago).
std::string respond(const std::string& q) {
    const auto gpu = [](const std::string& host, const std::string& state) {
        return labels(host,
                      {{"gpu", "0"}, {"uuid", "GPU-" + host}, {"model", "H100"}, {"state", state}});
    };
    if (q.starts_with("last_over_time(gua_daemon_last_tick_timestamp_seconds")) {
        return vector_of({{labels("ok"), k_now_s - 1},
                          {labels("stale"), k_now_s - 120},
                          {labels("down"), k_now_s - 30},
                          {labels("gone"), k_now_s - 3600}})
            .dump();
    }
    if (q.starts_with("last_over_time(gua_daemon_tick_interval_seconds")) {
        return vector_of({{labels("ok"), 1},
                          {labels("stale"), 1},
                          {labels("down"), 1},
                          {labels("gone"), 1}})
            .dump();
    }
    if (q.starts_with("gua_daemon_ticks_total[")) {
        return answer("matrix", json::array({samples_of(labels("ok"), 10, 1, 6, 0),
                                             samples_of(labels("stale"), 50, 0, 6, 0),
                                             samples_of(labels("down"), 70, 1, 6, 30)}))
            .dump();
    }
    if (q.starts_with("max by (instance, job)")) {
        return vector_of({{labels("ok"), 1},
                          {labels("stale"), 1},
                          {labels("down"), 1},
                          {labels("gone"), 1}})
            .dump();
    }
    if (q == "gua_allocation_info") {
        return vector_of({{labels("ok", {{"gpu", "0"},
                                         {"uuid", "GPU-ok"},
                                         {"kind", "slurm"},
                                         {"id", "4242"},
                                         {"user", "alice"},
                                         {"account", "ml"}}),
                           1}})
            .dump();
    }
    if (q == "up") {
        return vector_of({{labels("ok"), 1}, {labels("stale"), 1}, {labels("down"), 0}}).dump();
    }
    if (q.starts_with("last_over_time(gua_gpu_info")) {
        return vector_of({{gpu("ok", ""), 1},
                          {gpu("stale", ""), 1},
                          {gpu("down", ""), 1},
                          {gpu("gone", ""), 1}})
            .dump();
    }
    if (q.starts_with("gua_gpu_seconds_total[")) {
        // ok: active until 5 s ago, then idle-held; stale: idle-held counters that stopped; down:
        // idle-held until it went down 30 s ago.
        json ok_active = samples_of(gpu("ok", "active"), 100, 0, 10, 0);
        for (int i = 0; i < 5; ++i) {
            ok_active["values"][i][1] = std::to_string(95 + i);
        }
        return answer("matrix",
                      json::array({ok_active, samples_of(gpu("ok", "idle_held"), 0, 1, 10, 0),
                                   samples_of(gpu("stale", "truly_idle"), 500, 0, 10, 0),
                                   samples_of(gpu("down", "idle_held"), 200, 1, 10, 30)}))
            .dump();
    }
    if (q.starts_with("gua_gpu_user_seconds_total[")) {
        json l = gpu("ok", "idle_held");
        l["user"] = "alice";
        return answer("matrix", json::array({samples_of(l, 0, 1, 10, 0)})).dump();
    }
    return answer(q.starts_with("gua_") ? "matrix" : "vector", json::array()).dump();
}

PrometheusClient canned(const std::function<std::string(const std::string&)>& answers) {
    return PrometheusClient(
        "http://prometheus.test:9090",
        [answers](const std::string&, const std::vector<std::pair<std::string, std::string>>& p) {
            std::string query;
            for (const auto& [name, value] : p) {
                if (name == "query") {
                    query = value;
                }
            }
            return PromAnswer{200, answers(query)};
        });
}

const FleetCardNow& card_of(const FleetNow& f, const std::string& host) {
    for (const FleetCardNow& c : f.cards) {
        if (c.host == host) {
            return c;
        }
    }
    throw std::runtime_error("no card of " + host);
}

TEST(FleetNowRead, HostsAreOkStaleOrDownAndTheirCardsNeverIdle) {
    PrometheusClient prom = canned(respond);
    FleetNowOptions o;
    o.window_us = 10 * k_us_per_minute;
    const FleetNow f = read_fleet_now(prom, o, k_now);
    ASSERT_EQ(f.hosts.size(), 4u);
    std::map<std::string, std::string> status;
    for (const FleetHostNow& h : f.hosts) {
        status[h.host] = h.status;
    }
    EXPECT_EQ(status, (std::map<std::string, std::string>{
                          {"ok", "ok"}, {"stale", "stale"}, {"down", "down"}, {"gone", "stale"}}));

    const FleetCardNow& ok = card_of(f, "ok");
    EXPECT_EQ(ok.state, "idle-held");
    ASSERT_TRUE(ok.state_for_s);
    EXPECT_DOUBLE_EQ(*ok.state_for_s, 5) << "idle-held since the active counter last grew";
    EXPECT_FALSE(ok.state_for_at_least);
    ASSERT_EQ(ok.holders.size(), 1u);
    EXPECT_EQ(ok.holders[0].user, "alice");
    EXPECT_DOUBLE_EQ(ok.holders[0].idle_held_s.value_or(-1), 5);
    ASSERT_EQ(ok.allocations.size(), 1u);
    EXPECT_EQ(ok.allocations[0].id, "4242");
    EXPECT_EQ(ok.allocations[0].user, "alice");
    EXPECT_NE(render_fleet_now_text(f).find("allocated to alice (slurm 4242)"), std::string::npos);

    for (const char* host : {"stale", "down", "gone"}) {
        const FleetCardNow& c = card_of(f, host);
        EXPECT_EQ(c.state, status[host]) << host << ": the host's status, never a state";
        EXPECT_EQ(c.host_status, status[host]);
        EXPECT_FALSE(c.state_for_s) << host;
    }
    EXPECT_EQ(card_of(f, "down").last_state, "idle-held");
    EXPECT_EQ(card_of(f, "stale").last_state, "") << "its counters stopped: no tick seen";
    EXPECT_EQ(f.cards.front().host, "ok") << "the idle-held card first, the others' last";
}

TEST(FleetNowRead, AServerWithoutGuaSeriesIsOneLineError) {
    PrometheusClient prom = canned([](const std::string& q) {
        return answer(q.find('[') != std::string::npos && !q.starts_with("last_over_time")
                          ? "matrix"
                          : "vector",
                      json::array())
            .dump();
    });
    try {
        read_fleet_now(prom, FleetNowOptions{}, k_now);
        FAIL() << "no error";
    } catch (const Fatal& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("holds no gua daemon series"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos);
    }
}

} // namespace gua::report::fleet_now_read_test

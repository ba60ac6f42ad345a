// SPDX-License-Identifier: Apache-2.0
// §8 of `gua report --prometheus` on answers served through the client's transport seam: the
// recommender's evidence read back per card, the notes on what it cannot take as a host's report
// does, and the honest "not computed" of daemons that do not export the evidence.
#include "fleet/fleet.hpp"
#include "report/render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {
namespace prometheus_advice_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_from = 1778486400LL * k_us_per_second; // Monday 2026-05-11 08:00 UTC
constexpr double k_hour_s = 3600;
constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
const std::string k_uuid = "GPU-11111111-0000-0000-0000-000000000000";

/// The series of each family at the window's end: (family name, series).
using Answers = std::vector<std::pair<std::string, json>>;

json sample(json labels, double value) {
    return {{"metric", std::move(labels)}, {"value", {1778490000.0, std::to_string(value)}}};
}

/// Host h1's card 0 held idle for the whole hour by alice with 8 GiB of its 80 GiB, in office
/// hours of `zone`; with `evidence` false, the daemon is older and exports none of §8's families.
Answers one_idle_card(bool evidence, const std::string& zone = "UTC") {
    const json card{
        {"instance", "h1"}, {"gpu", "0"}, {"uuid", k_uuid}, {"model", "NVIDIA H100 80GB HBM3"}};
    const auto with = [&](const char* name, const char* value) {
        json labels = card;
        labels[name] = value;
        return labels;
    };
    Answers a{
        {"gua_gpu_seconds_total", json::array({sample(with("state", "idle_held"), k_hour_s)})},
        {"gua_gpu_card_ticks_total", json::array({sample(card, 120)})},
        {"gua_gpu_memory_total_bytes", json::array({sample(card, 80 * k_gib)})},
        {"gua_identity_gpu_seconds_total",
         json::array({sample({{"user", "alice"}, {"state", "idle_held"}}, k_hour_s)})},
    };
    if (evidence) {
        a.emplace_back("gua_waste_pools_info",
                       json::array({sample({{"instance", "h1"}, {"time_zone", zone}}, 1)}));
        a.emplace_back("gua_waste_pool_seconds_total",
                       json::array({sample(with("pool", "held_office"), k_hour_s)}));
        a.emplace_back("gua_gpu_measured_seconds_total",
                       json::array({sample(with("period", "office"), k_hour_s)}));
        a.emplace_back("gua_gpu_held_bytes_seconds_total",
                       json::array({sample(with("during", "idle_held"), 8 * k_gib * k_hour_s)}));
        json user = with("user", "alice");
        user["state"] = "idle_held";
        a.emplace_back("gua_gpu_user_seconds_total", json::array({sample(user, k_hour_s)}));
    }
    return a;
}

/// A Prometheus on `answers` as gua's reader asks it (prometheus/counters.hpp): the hosts
/// from the label index, and at each edge lookup every series of the families the query names,
/// each counter at 0 at the window's start and at its value at the end, beside a daemon start
/// time that does not change (so each counter's increase is its value). Range queries find no
/// series.
PrometheusClient client(const Answers& answers) {
    return PrometheusClient(
        "http://prometheus.test:9090",
        [answers](const std::string& path,
                  const std::vector<std::pair<std::string, std::string>>& params) {
            const std::map<std::string, std::string> p(params.begin(), params.end());
            std::set<std::string> hosts;
            for (const auto& [family, series] : answers) {
                for (const json& s : series) {
                    hosts.insert(s["metric"].value("instance", ""));
                }
            }
            hosts.erase("");
            if (path.find("/label/") != std::string::npos) {
                return PromAnswer{200, json{{"status", "success"}, {"data", hosts}}.dump()};
            }
            json result = json::array();
            const std::string& query = p.at("query");
            const bool lookup = !path.ends_with("query_range") && query.starts_with("sum by (");
            const bool at_start =
                lookup && std::stod(p.at("time")) * 1e6 < static_cast<double>(k_from) + 1;
            const auto add = [&](json metric, const std::string& name, double value) {
                metric["__name__"] = name;
                result.push_back({{"metric", metric}, {"value", {0.0, std::to_string(value)}}});
            };
            if (lookup && query.find("gua_daemon_start_time_seconds") != std::string::npos) {
                for (const std::string& h : hosts) {
                    add({{"instance", h}}, "gua_daemon_start_time_seconds", 1.7e9);
                }
            }
            for (const auto& [family, series] : answers) {
                if (!lookup || query.find(family) == std::string::npos) {
                    continue;
                }
                const bool gauge = family.ends_with("_bytes") || family.ends_with("_info");
                for (const json& s : series) {
                    add(s["metric"], family,
                        at_start && !gauge ? 0.0 : std::stod(s["value"][1].get<std::string>()));
                }
            }
            const char* type = path.ends_with("query_range") ? "matrix" : "vector";
            return PromAnswer{200, json{{"status", "success"},
                                        {"data", {{"resultType", type}, {"result", result}}}}
                                       .dump()};
        });
}

ReportModel fleet_report(const Answers& answers, const std::string& zone = "UTC") {
    PrometheusClient prom = client(answers);
    BuildOptions o;
    o.from = k_from;
    o.to = k_from + k_us_per_hour;
    o.window_label = "1h";
    o.time_zone = zone;
    FleetOptions fleet;
    fleet.url = prom.url();
    return build_prometheus_report(prom, fleet, o, TimeZone::load(zone).value());
}

const audit::Recommendation* find_rule(const ReportModel& m, const std::string& id) {
    for (const audit::Recommendation& r : m.advice.recommendations) {
        if (r.id == id) {
            return &r;
        }
    }
    return nullptr;
}

TEST(PrometheusAdvice, TheRulesReadThePoolsBackPerCard) {
    const ReportModel m = fleet_report(one_idle_card(true));
    ASSERT_TRUE(m.advice_unavailable.empty()) << m.advice_unavailable;
    const audit::Recommendation* culling = find_rule(m, "idle-culling");
    ASSERT_NE(culling, nullptr);
    EXPECT_EQ(culling->gpus, std::vector<int>{0});
    EXPECT_EQ(culling->identities, std::vector<std::string>{"alice"});
    EXPECT_DOUBLE_EQ(culling->addressed_gpu_hours, 1.0);
    // 8 of 80 GiB: one MIG slice of seven would hold it, so sharing wins back at most 75 %.
    const audit::Recommendation* sharing = find_rule(m, "gpu-sharing");
    ASSERT_NE(sharing, nullptr);
    EXPECT_DOUBLE_EQ(sharing->recovery, 0.75);
    EXPECT_DOUBLE_EQ(m.advice.pool_gpu_hours[static_cast<std::size_t>(audit::Pool::held_office)],
                     1.0);
    EXPECT_EQ(m.pools_time_zone, "UTC");
    ASSERT_EQ(m.advice_notes.size(), 1u);
    EXPECT_NE(m.advice_notes[0].find("in UTC"), std::string::npos) << m.advice_notes[0];
    EXPECT_EQ(m.advice_notes[0].find("mixes"), std::string::npos) << m.advice_notes[0];
}

TEST(PrometheusAdvice, AZoneOtherThanTheReportsIsNoted) {
    if (!TimeZone::load("Asia/Kolkata")) {
        GTEST_SKIP() << "no tz database";
    }
    const ReportModel m = fleet_report(one_idle_card(true, "Asia/Kolkata"));
    ASSERT_TRUE(m.advice_unavailable.empty());
    EXPECT_EQ(m.pools_time_zone, "Asia/Kolkata");
    ASSERT_FALSE(m.advice_notes.empty());
    EXPECT_NE(m.advice_notes[0].find("in Asia/Kolkata (their [report] time_zone), not in this "
                                     "report's UTC"),
              std::string::npos)
        << m.advice_notes[0];
    // The same zone asked with --tz: nothing to reconcile.
    const ReportModel same = fleet_report(one_idle_card(true, "Asia/Kolkata"), "Asia/Kolkata");
    EXPECT_EQ(same.advice_notes.at(0).find("not in this report's"), std::string::npos);
}

TEST(PrometheusAdvice, OlderDaemonsLeaveItNotComputedWithTheReason) {
    const ReportModel m = fleet_report(one_idle_card(false));
    EXPECT_TRUE(m.advice.recommendations.empty());
    EXPECT_NE(m.advice_unavailable.find("do not export the recommender's evidence"),
              std::string::npos)
        << m.advice_unavailable;
    EXPECT_EQ(m.gpus.size(), 1u) << "§1–§7 as before";
}

TEST(PrometheusAdvice, AHostWithoutTheEvidenceIsNamed) {
    Answers a = one_idle_card(true);
    // Host h2 (an older daemon) has a card in §3 but no evidence.
    for (auto& [needle, series] : a) {
        if (needle == "gua_gpu_seconds_total") {
            series.push_back(sample({{"instance", "h2"},
                                     {"gpu", "0"},
                                     {"uuid", "GPU-22222222-0000-0000-0000-000000000000"},
                                     {"model", "NVIDIA H100 80GB HBM3"},
                                     {"state", "truly_idle"}},
                                    k_hour_s));
        }
    }
    const ReportModel m = fleet_report(a);
    ASSERT_TRUE(m.advice_unavailable.empty());
    EXPECT_EQ(m.gpus.size(), 2u);
    bool named = false;
    for (const std::string& note : m.advice_notes) {
        named = named || note.find("leaves out 1 of 2 hosts") != std::string::npos;
    }
    EXPECT_TRUE(named);
    // h2's truly idle hour is outside the baseline: only h1's held hour is in it.
    double pools = 0;
    for (const double h : m.advice.pool_gpu_hours) {
        pools += h;
    }
    EXPECT_DOUBLE_EQ(pools, 1.0);
}

TEST(PrometheusAdvice, AllocatedUnusedReadsBackWithTheSameMath) {
    // Host h1's card 0: active for half the hour, allocated to carol's job and unused for the
    // other half; the owner counter says the same.
    const json card{
        {"instance", "h1"}, {"gpu", "0"}, {"uuid", k_uuid}, {"model", "NVIDIA H100 80GB HBM3"}};
    json active = card;
    active["state"] = "active";
    json unused = card;
    unused["state"] = "allocated_unused";
    const Answers answers{
        {"gua_gpu_seconds_total",
         json::array({sample(active, k_hour_s / 2), sample(unused, k_hour_s / 2)})},
        {"gua_gpu_card_ticks_total", json::array({sample(card, 120)})},
        {"gua_allocated_unused_user_seconds_total",
         json::array({sample({{"instance", "h1"}, {"user", "carol"}}, k_hour_s / 2)})},
    };
    const ReportModel m = fleet_report(answers);
    EXPECT_NEAR(m.headline.allocated_unused_hours, 0.5, 1e-9);
    EXPECT_NEAR(m.headline.allocated_unused, 0.5, 1e-9);
    EXPECT_NEAR(m.waste.blocked_share, 0.5, 1e-9);
    EXPECT_TRUE(m.waste.policy_problem);
    ASSERT_TRUE(m.allocation);
    EXPECT_FALSE(m.allocation->matrix_known);
    // Half an hour of an H100 at the built-in $4 per GPU-hour: 200 ¢, all of it carol's.
    EXPECT_EQ(m.cost.total.allocated_unused_cents, 200);
    ASSERT_EQ(m.allocation->owners.size(), 1u);
    EXPECT_EQ(m.allocation->owners[0].name, "carol");
    EXPECT_NEAR(m.allocation->owners[0].allocated_unused_hours, 0.5, 1e-9);
    EXPECT_EQ(m.allocation->owners[0].allocated_unused_cents, 200);
    const json j = json::parse(render_json(m));
    EXPECT_TRUE(j["allocations"]["matrix"].is_null());
    EXPECT_TRUE(j["allocations"]["owners"][0]["allocations"].is_null());
}

} // namespace prometheus_advice_test
} // namespace gua::report

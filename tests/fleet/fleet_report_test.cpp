// SPDX-License-Identifier: Apache-2.0
// End to end: a real Prometheus scrapes three gua daemons ("hosts" on their own fake-NVML
// scenarios, with waste that fires six of the seven rules); `gua report --prometheus` over the
// window must equal the sum of the three hosts' SQLite reports on every section — states, cards,
// users, heatmap, cost, recommendations, health and the verdict — within one scrape interval per
// card and window edge (one host restarts inside the window), and promtool must accept the
// exposition.
#include "core/timezone.hpp"
#include "fleet/daemon_host.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

namespace gua::fleet_testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr double k_scrape_interval_s = 1.0;
constexpr double k_cards = 7;
/// The error a window edge can put on one card's time in one state: one scrape interval.
constexpr double k_card_edge_h = k_scrape_interval_s / 3600.0;
/// --price 1000: the highest --price takes, so that cents resolve seconds.
constexpr double k_cents_per_second = 1000.0 * 100 / 3600;

std::string iso_seconds(TimeUs t) {
    return format_iso8601(t / k_us_per_second * k_us_per_second);
}

json report(const std::vector<std::string>& source, TimeUs from, TimeUs to,
            const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> args{"report"};
    args.insert(args.end(), source.begin(), source.end());
    for (const std::string& a :
         {std::string("--from"), iso_seconds(from), std::string("--to"), iso_seconds(to),
          std::string("--format"), std::string("json"), std::string("--top"), std::string("100")}) {
        args.push_back(a);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    const test::RunResult r = test::run_gua(args);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

json card(const std::string& uuid, int util_pct) {
    return {{"uuid", uuid}, {"util", {{0, util_pct}}}};
}

json holder(int device, const char* pid_env, int mib, int sm_pct) {
    return {{"device", device},
            {"pid_env", pid_env},
            {"memory_mib", {{0, mib}}},
            {"sm_util", {{0, sm_pct}}}};
}

/// Host A: GPU 0 steady at 95 % drawing 500 of 700 W (compute-bound), its clocks held by the
/// power cap; GPU 1 held idle with
/// 8000 of 81559 MiB (idle culling; sharing: one MIG slice would hold it).
json scenario_a() {
    json busy = card("GPU-aaaaaaaa-0000-0000-0000-000000000000", 95);
    busy["power_mw"] = {{0, 500000}};
    busy["clock_event_reasons"] = {{0, 0x4}}; // SW power cap throughout: a §9 finding
    return {{"driver_version", "550.54.15"},
            {"time_scale", 1},
            {"devices", {busy, card("GPU-aaaaaaaa-0000-0000-0000-000000000001", 0)}},
            {"processes", {holder(0, "HOLDER_1", 20000, 95), holder(1, "HOLDER_2", 8000, 0)}}};
}

/// Host B (restarted inside the window): GPU 0 held idle with 30000 MiB; GPU 1 steady at 50 %
/// with 4000 MiB (larger batches); GPU 2 free. Constant, so a restart changes nothing.
json scenario_b() {
    return {{"driver_version", "550.54.15"},
            {"time_scale", 1},
            {"devices",
             {card("GPU-bbbbbbbb-0000-0000-0000-000000000000", 0),
              card("GPU-bbbbbbbb-0000-0000-0000-000000000001", 50),
              card("GPU-bbbbbbbb-0000-0000-0000-000000000002", 0)}},
            {"processes", {holder(0, "HOLDER_1", 30000, 0), holder(1, "HOLDER_2", 4000, 50)}}};
}

/// Host C: GPU 0 bursty, 100 % and 0 % every other half second (a starved data loader); GPU 1
/// steady at 40 % with 78000 of 81559 MiB (memory-bound).
json scenario_c() {
    json bursts = json::array();
    for (int k = 0; k < 600; ++k) {
        bursts.push_back({k * 0.5, k % 2 == 0 ? 100 : 0});
    }
    json bursty = card("GPU-cccccccc-0000-0000-0000-000000000000", 0);
    bursty["util"] = bursts;
    json loader = holder(0, "HOLDER_1", 10000, 0);
    loader["sm_util"] = bursts;
    return {{"driver_version", "550.54.15"},
            {"time_scale", 1},
            {"devices", {bursty, card("GPU-cccccccc-0000-0000-0000-000000000001", 40)}},
            {"processes", {loader, holder(1, "HOLDER_2", 78000, 40)}}};
}

/// Sum of a number over the host reports.
double sum(const std::vector<const json*>& hosts, const json::json_pointer& p) {
    double total = 0;
    for (const json* h : hosts) {
        total += h->at(p).get<double>();
    }
    return total;
}

void figure(const std::string& what, double prometheus, double sqlite, const char* unit) {
    std::cout << "[ figures  ] " << what << ": Prometheus " << prometheus << " " << unit
              << ", SQLite sum " << sqlite << " " << unit << ", delta " << prometheus - sqlite
              << "\n";
}

/// State hours of a heatmap cell (shares × card-hours), by (weekday, hour).
std::map<std::pair<int, int>, std::array<double, 4>> heat(const json& r) {
    std::map<std::pair<int, int>, std::array<double, 4>> out;
    for (const json& c : r["heatmap"]["cells"]) {
        const double h = c["gpu_hours"].get<double>();
        std::array<double, 4>& cell = out[{c["weekday"].get<int>(), c["hour"].get<int>()}];
        cell[0] += h;
        cell[1] += c["active"].get<double>() * h;
        cell[2] += c["idle_held"].get<double>() * h;
        cell[3] += c["truly_idle"].get<double>() * h;
    }
    return out;
}

/// A rule's item in a report, or null.
const json* rule(const json& r, const std::string& id) {
    for (const json& item : r["recommendations"]["items"]) {
        if (item["id"] == id) {
            return &item;
        }
    }
    return nullptr;
}

/// §8 of the fleet against the hosts' own §8: the same rules on the same cards for the same
/// users, each addressing the hosts' sum, and the combined saving worked out from the hosts'
/// per-rule savings (1 − Π over groups of (1 − the largest saving share in the group)).
void expect_same_recommendations(const json& fleet, const std::vector<const json*>& hosts) {
    const double tolerance_cents = k_cards * 2 * k_scrape_interval_s * k_cents_per_second;
    std::set<std::string> want;
    for (const json* h : hosts) {
        EXPECT_EQ((*h)["recommendations"]["computed"], true);
        for (const json& item : (*h)["recommendations"]["items"]) {
            want.insert(item["id"].get<std::string>());
        }
    }
    EXPECT_EQ(want, (std::set<std::string>{"compute-bound", "data-loader", "gpu-sharing",
                                           "idle-culling", "larger-batches", "memory-bound"}))
        << "the scenarios are built to fire these";
    std::set<std::string> got;
    for (const json& item : fleet["recommendations"]["items"]) {
        got.insert(item["id"].get<std::string>());
    }
    EXPECT_EQ(got, want);

    const json::json_pointer baseline("/recommendations/baseline/window_cents");
    const double fleet_baseline = fleet.at(baseline).get<double>();
    const double hosts_baseline = sum(hosts, baseline);
    EXPECT_NEAR(fleet_baseline, hosts_baseline, tolerance_cents);
    figure("§8 waste baseline", fleet_baseline, hosts_baseline, "cents");
    for (const auto& [pool, value] : fleet["recommendations"]["baseline"]["pools"].items()) {
        const json::json_pointer p("/recommendations/baseline/pools/" + pool + "/gpu_hours");
        EXPECT_NEAR(value["gpu_hours"].get<double>(), sum(hosts, p), k_cards * 2 * k_card_edge_h)
            << pool;
        figure("§8 pool " + pool, value["gpu_hours"].get<double>() * 3600, sum(hosts, p) * 3600,
               "s");
    }

    std::map<std::string, double> group_saving; // cents, the largest of each group
    for (const std::string& id : want) {
        const json* f = rule(fleet, id);
        ASSERT_NE(f, nullptr) << id;
        double hours = 0;
        double cents = 0;
        double saving = 0;
        std::multiset<int> gpus;
        std::set<std::string> users;
        for (const json* h : hosts) {
            if (const json* r = rule(*h, id)) {
                hours += (*r)["addressed_gpu_hours"].get<double>();
                cents += (*r)["addressed_cents"].get<double>();
                saving += (*r)["savings_fraction"].get<double>() *
                          (*h)["recommendations"]["baseline"]["window_cents"].get<double>();
                for (const json& g : (*r)["gpus"]) {
                    gpus.insert(g.get<int>());
                }
                for (const json& u : (*r)["identities"]) {
                    users.insert(u.get<std::string>());
                }
            }
        }
        std::multiset<int> fleet_gpus;
        for (const json& g : (*f)["gpus"]) {
            fleet_gpus.insert(g.get<int>());
        }
        std::set<std::string> fleet_users;
        for (const json& u : (*f)["identities"]) {
            fleet_users.insert(u.get<std::string>());
        }
        EXPECT_EQ(fleet_gpus, gpus) << id;
        EXPECT_EQ(fleet_users, users) << id;
        EXPECT_FALSE(users.empty()) << id;
        EXPECT_NEAR((*f)["addressed_gpu_hours"].get<double>(), hours,
                    2 * k_card_edge_h * static_cast<double>(gpus.size()))
            << id;
        EXPECT_NEAR((*f)["addressed_cents"].get<double>(), cents,
                    2 * k_scrape_interval_s * k_cents_per_second * static_cast<double>(gpus.size()))
            << id;
        const double fleet_saving = (*f)["savings_fraction"].get<double>() * fleet_baseline;
        EXPECT_NEAR(fleet_saving, saving, tolerance_cents) << id;
        figure("§8 " + id + " saving", fleet_saving, saving, "cents");
        double& g = group_saving[(*f)["group"].get<std::string>()];
        g = std::max(g, saving);
    }
    double kept = 1;
    for (const auto& [group, saving] : group_saving) {
        kept *= 1 - saving / hosts_baseline;
    }
    const double combined = (1 - kept) * hosts_baseline;
    const double fleet_combined =
        fleet["recommendations"]["combined"]["window_cents"].get<double>();
    EXPECT_NEAR(fleet_combined, combined, tolerance_cents);
    EXPECT_GT(fleet_combined, 0);
    figure("§8 combined saving", fleet_combined, combined, "cents");
}

/// §9 of the fleet against the hosts' own, card by card (matched by uuid): energy, clocks and
/// memory within one scrape interval per window edge, and the same findings on the same cards.
void expect_same_health(const json& fleet, const std::vector<const json*>& hosts) {
    ASSERT_TRUE(fleet["health"].is_object()) << "§9 from the daemons' health counters";
    // A card draws at most its 700 W power limit: one interval per edge.
    const double edge_kwh = 2 * 700.0 * k_scrape_interval_s / 3.6e6;
    double kwh = 0;
    std::multiset<std::string> findings;
    for (const json* h : hosts) {
        ASSERT_TRUE((*h)["health"].is_object());
        kwh += (*h)["health"]["energy"]["kwh"].get<double>();
        for (std::size_t i = 0; i < (*h)["gpus"].size(); ++i) {
            const json& uuid = (*h)["gpus"][i]["uuid"];
            std::size_t k = 0;
            while (k < fleet["gpus"].size() && fleet["gpus"][k]["uuid"] != uuid) {
                ++k;
            }
            ASSERT_LT(k, fleet["health"]["gpus"].size()) << uuid;
            const json& got = fleet["health"]["gpus"][k];
            const json& want = (*h)["health"]["gpus"][i];
            SCOPED_TRACE(uuid.get<std::string>());
            EXPECT_EQ(got["uuid"], uuid);
            EXPECT_NEAR(got["energy"]["kwh"].get<double>(), want["energy"]["kwh"].get<double>(),
                        edge_kwh);
            EXPECT_GT(got["energy"]["kwh"].get<double>(), 0);
            for (const char* f : {"clock_ratio", "sw_power_cap_share"}) { // null: never active
                const json& w = want["throttle"][f];
                EXPECT_EQ(got["throttle"][f].is_null(), w.is_null()) << f;
                if (!w.is_null() && !got["throttle"][f].is_null()) {
                    EXPECT_NEAR(got["throttle"][f].get<double>(), w.get<double>(), 1e-6) << f;
                }
            }
            for (const char* f : {"known_gpu_hours", "pressure_gpu_hours"}) {
                EXPECT_NEAR(got["memory"][f].get<double>(), want["memory"][f].get<double>(),
                            2 * k_card_edge_h)
                    << f;
            }
        }
        for (const json& f : (*h)["health"]["findings"]) {
            findings.insert(f["id"].get<std::string>() + " on GPU " + f["gpu"].dump());
        }
    }
    std::multiset<std::string> got_findings;
    for (const json& f : fleet["health"]["findings"]) {
        got_findings.insert(f["id"].get<std::string>() + " on GPU " + f["gpu"].dump());
    }
    EXPECT_EQ(got_findings, findings);
    EXPECT_EQ(findings.count("power-capping on GPU 0"), 1u) << "host A's capped card";
    EXPECT_EQ(findings.count("memory-pressure on GPU 1"), 1u) << "host C's nearly full card";
    EXPECT_NEAR(fleet["health"]["energy"]["kwh"].get<double>(), kwh, k_cards * edge_kwh);
    figure("§9 energy", fleet["health"]["energy"]["kwh"].get<double>() * 3.6e6, kwh * 3.6e6, "J");
}

TEST(FleetPrometheus, ReportEqualsTheSumOfTheHostReports) {
    if (access(k_prometheus, X_OK) != 0 || access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "prometheus/promtool not installed (scripts/install-deps.sh --test)";
    }
    if (!fake_nvml_available()) {
        GTEST_SKIP() << "fake NVML not built: " << fake_nvml_library();
    }
    // The daemons split office hours in a zone 5:30 off UTC, as the hosts' reports are asked.
    const std::string zone = TimeZone::load("Asia/Kolkata") ? "Asia/Kolkata" : "UTC";
    const std::string config = "[report]\ntime_zone = \"" + zone + "\"\n";
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();
    const Holder a1(1001);
    const Holder a2(1002);
    const Holder b1(1003);
    const Holder b2(1001);
    const Holder c1(1003);
    const Holder c2(1002);
    const std::uint16_t pa = free_port();
    const std::uint16_t pb = free_port();
    const std::uint16_t pc = free_port();
    const std::string ta = "127.0.0.1:" + std::to_string(pa);
    const std::string tb = "127.0.0.1:" + std::to_string(pb);
    const std::string tc = "127.0.0.1:" + std::to_string(pc);
    PrometheusServer prom(dir / "prom", {ta, tb, tc});
    ASSERT_TRUE(prom.wait_ready(30s))
        << test::read_text((dir / "prom" / "prometheus.log").string());

    DaemonHost a(dir, "host-a", scenario_a(), pa, {{"HOLDER_1", a1.pid()}, {"HOLDER_2", a2.pid()}},
                 "1s", {}, config);
    DaemonHost c(dir, "host-c", scenario_c(), pc, {{"HOLDER_1", c1.pid()}, {"HOLDER_2", c2.pid()}},
                 "1s", {}, config);
    const auto start_b = [&] {
        return std::make_unique<DaemonHost>(dir, "host-b", scenario_b(), pb,
                                            Env{{"HOLDER_1", b1.pid()}, {"HOLDER_2", b2.pid()}},
                                            "1s", std::vector<std::string>{}, config);
    };
    std::unique_ptr<DaemonHost> b = start_b();
    ASSERT_TRUE(prom.wait_value("count(up == 1)", 3, 40s))
        << test::read_text(a.log()) << test::read_text(b->log()) << test::read_text(c.log());

    // promtool accepts a real scrape.
    const HttpResponse scrape = http_get(pa, "/metrics");
    ASSERT_EQ(scrape.status, 200);
    const test::RunResult lint = promtool_check_metrics(scrape.body, temp.file("scrape.txt"));
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
    EXPECT_NE(scrape.body.find("gua_waste_pools_info{time_zone=\"" + zone + "\"} 1"),
              std::string::npos);

    // A 20 s window inside the daemons' lifetime, on whole seconds (the report flags' precision).
    const TimeUs from = (wall_now() / k_us_per_second + 2) * k_us_per_second;
    const TimeUs to = from + 20 * k_us_per_second;
    // Host B restarts inside the window: its counters continue from its database.
    ASSERT_TRUE(wait_for([&] { return wall_now() > from + 8 * k_us_per_second; }, 20s));
    EXPECT_EQ(b->stop(), 0) << test::read_text(b->log());
    b = start_b();
    ASSERT_TRUE(wait_for([&] { return wall_now() > to + 1500 * k_us_per_ms; }, 40s));
    ASSERT_TRUE(a.running() && b->running() && c.running())
        << test::read_text(a.log()) << test::read_text(b->log()) << test::read_text(c.log());
    const std::string b_log = test::read_text(b->log());
    const std::size_t restored = b_log.rfind("counters restored from ");
    ASSERT_NE(restored, std::string::npos) << b_log;
    EXPECT_NE(b_log.substr(restored + 23, 2), "0 ") << b_log;

    const std::vector<std::string> priced{"--price", "1000", "--tz", zone};
    const json fleet = report({"--prometheus", prom.url()}, from, to, priced, "fleet");
    const json ra = report({"--db", a.db()}, from, to, priced, "host-a");
    const json rb = report({"--db", b->db()}, from, to, priced, "host-b");
    const json rc = report({"--db", c.db()}, from, to, priced, "host-c");
    ASSERT_FALSE(fleet.empty() || ra.empty() || rb.empty() || rc.empty());
    const std::vector<const json*> hosts{&ra, &rb, &rc};

    // §1 and the verdict.
    const double tolerance_h = k_scrape_interval_s * k_cards / 3600.0;
    double idle_held = 0;
    double measured = 0;
    for (const char* state : {"active", "idle_held", "truly_idle"}) {
        const json::json_pointer p("/headline/" + std::string(state) + "_gpu_hours");
        EXPECT_NEAR(fleet.at(p).get<double>(), sum(hosts, p), tolerance_h) << state;
        EXPECT_GT(fleet.at(p).get<double>(), 5.0 / 3600) << state;
        figure(std::string("§1 ") + state, fleet.at(p).get<double>() * 3600, sum(hosts, p) * 3600,
               "s");
        measured += sum(hosts, p);
        idle_held += std::string(state) == "idle_held" ? sum(hosts, p) : 0;
    }
    EXPECT_NEAR(fleet["samples"].get<double>(), sum(hosts, json::json_pointer("/samples")),
                k_cards);
    EXPECT_EQ(fleet["waste"]["gpus_in_window"], 7);
    ASSERT_EQ(fleet["hosts"].size(), 3u);
    EXPECT_NEAR(fleet["policy_verdict"]["idle_held_share"].get<double>(), idle_held / measured,
                0.02);
    EXPECT_EQ(fleet["policy_verdict"]["allocation_policy_problem"], idle_held / measured > 0.20);
    figure("verdict idle-held share", fleet["policy_verdict"]["idle_held_share"].get<double>(),
           idle_held / measured, "");

    // §3 per host/GPU. A card whose state changes inside the window can have each edge's error
    // (a tick straddling the edge in SQLite, extrapolation in increase()) in a different state:
    // up to one interval per edge.
    const std::map<const json*, std::string> target{{&ra, ta}, {&rb, tb}, {&rc, tc}};
    for (const json* host : hosts) {
        for (const json& g : (*host)["gpus"]) {
            const auto it = std::find_if(fleet["gpus"].begin(), fleet["gpus"].end(),
                                         [&](const json& f) { return f["uuid"] == g["uuid"]; });
            ASSERT_NE(it, fleet["gpus"].end()) << g["uuid"];
            EXPECT_EQ((*it)["host"], target.at(host));
            for (const char* state : {"active", "idle_held", "truly_idle"}) {
                const std::string key = std::string(state) + "_gpu_hours";
                EXPECT_NEAR((*it)["states"][key].get<double>(), g["states"][key].get<double>(),
                            2 * k_card_edge_h)
                    << g["uuid"] << " " << state;
            }
        }
    }

    // §4 per user across hosts: each uid holds cards on two hosts.
    std::map<std::string, std::array<double, 3>> users;
    for (const json* host : hosts) {
        for (const json& r : (*host)["identities"]["top"]) {
            std::array<double, 3>& u = users[r["name"]];
            u[0] += r["active_gpu_hours"].get<double>();
            u[1] += r["idle_held_gpu_hours"].get<double>();
            u[2] += r["idle_held_gib_hours"].get<double>();
        }
    }
    ASSERT_EQ(fleet["identities"]["top"].size(), users.size());
    for (const json& r : fleet["identities"]["top"]) {
        const std::array<double, 3>& u = users[r["name"]];
        EXPECT_NEAR(r["active_gpu_hours"].get<double>(), u[0], tolerance_h) << r["name"];
        EXPECT_NEAR(r["idle_held_gpu_hours"].get<double>(), u[1], tolerance_h) << r["name"];
        EXPECT_NEAR(r["idle_held_gib_hours"].get<double>(), u[2], 80 * tolerance_h) << r["name"];
        EXPECT_GT(r["gpu_hours"].get<double>(), 5.0 / 3600) << r["name"];
        figure("§4 " + r["name"].get<std::string>(), r["gpu_hours"].get<double>() * 3600,
               (u[0] + u[1]) * 3600, "s");
    }

    // §5: each weekday × hour cell, state by state.
    const auto fleet_heat = heat(fleet);
    std::map<std::pair<int, int>, std::array<double, 4>> hosts_heat;
    for (const json* host : hosts) {
        for (const auto& [cell, hours] : heat(*host)) {
            for (std::size_t k = 0; k < 4; ++k) {
                hosts_heat[cell][k] += hours[k];
            }
        }
    }
    EXPECT_EQ(fleet["heatmap"]["time_zone"], zone);
    for (const auto& [cell, hours] : hosts_heat) {
        ASSERT_TRUE(fleet_heat.contains(cell)) << cell.first << " " << cell.second;
        for (std::size_t k = 0; k < 4; ++k) {
            EXPECT_NEAR(fleet_heat.at(cell)[k], hours[k], 2 * tolerance_h)
                << cell.first << " " << cell.second << " " << k;
        }
        figure("§5 cell " + std::to_string(cell.first) + "/" + std::to_string(cell.second),
               fleet_heat.at(cell)[0] * 3600, hours[0] * 3600, "card-s");
    }

    // §7 at $1,000 per GPU-hour: per state, per user.
    const double tolerance_cents = k_cards * 2 * k_scrape_interval_s * k_cents_per_second;
    for (const char* state : {"active", "idle_held", "truly_idle"}) {
        const json::json_pointer p("/cost/total/" + std::string(state) + "_cents");
        EXPECT_NEAR(fleet.at(p).get<double>(), sum(hosts, p), tolerance_cents) << state;
        EXPECT_GT(fleet.at(p).get<double>(), 5 * k_cents_per_second) << state;
        figure(std::string("§7 ") + state, fleet.at(p).get<double>(), sum(hosts, p), "cents");
    }
    std::map<std::string, double> user_cents;
    for (const json* host : hosts) {
        for (const json& r : (*host)["cost"]["identities"]) {
            user_cents[r["name"]] += r["total_cents"].get<double>();
        }
    }
    ASSERT_EQ(fleet["cost"]["identities"].size(), user_cents.size());
    for (const json& r : fleet["cost"]["identities"]) {
        EXPECT_NEAR(r["total_cents"].get<double>(), user_cents[r["name"]], tolerance_cents)
            << r["name"];
    }
    EXPECT_GT(fleet["cost"]["waste_run_rate"]["hourly_cents"].get<double>(), 0);

    // §9: the hosts' health, from the daemons' health counters.
    expect_same_health(fleet, hosts);

    // §8: computed from the counters, as the hosts' own.
    EXPECT_EQ(fleet["recommendations"]["computed"], true);
    EXPECT_EQ(fleet["recommendations"]["pools_time_zone"], zone);
    expect_same_recommendations(fleet, hosts);

    // With built-in prices each card costs what its host's report says it costs.
    const std::vector<std::string> built_in{"--tz", zone};
    const json fleet_list = report({"--prometheus", prom.url()}, from, to, built_in, "fleet list");
    for (const json* host : hosts) {
        const json listed = report({"--db", host == &ra   ? a.db()
                                            : host == &rb ? b->db()
                                                          : c.db()},
                                   from, to, built_in, "host list");
        for (std::size_t i = 0; i < listed["gpus"].size(); ++i) {
            for (std::size_t k = 0; k < fleet_list["gpus"].size(); ++k) {
                if (fleet_list["gpus"][k]["uuid"] == listed["gpus"][i]["uuid"]) {
                    EXPECT_EQ(fleet_list["cost"]["gpus"][k]["price_per_gpu_hour"],
                              listed["cost"]["gpus"][i]["price_per_gpu_hour"]);
                    EXPECT_EQ(fleet_list["cost"]["gpus"][k]["model"],
                              listed["cost"]["gpus"][i]["model"]);
                }
            }
        }
    }

    // Asked in another zone than the daemons', §8 says which zone its pools are in.
    if (zone != "UTC") {
        const json other = report({"--prometheus", prom.url()}, from, to, {"--tz", "UTC"}, "UTC");
        const std::string note = other["recommendations"]["notes"].at(0).get<std::string>();
        EXPECT_NE(note.find("in " + zone + " (their [report] time_zone), not in this report's UTC"),
                  std::string::npos)
            << note;
        EXPECT_EQ(other["recommendations"]["pools_time_zone"], zone);
    }
    const test::RunResult text = test::run_gua({"report", "--prometheus", prom.url(), "--from",
                                                iso_seconds(from), "--to", iso_seconds(to)});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("[idle-culling]"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("no rule fired"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("not computed"), std::string::npos) << text.out;

    EXPECT_EQ(a.stop(), 0) << test::read_text(a.log());
    EXPECT_EQ(b->stop(), 0) << test::read_text(b->log());
    EXPECT_EQ(c.stop(), 0) << test::read_text(c.log());
}

} // namespace
} // namespace gua::fleet_testing

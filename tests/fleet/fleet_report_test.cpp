// End to end: a real Prometheus scrapes two gua daemons ("hosts" on their own fake-NVML
// scenarios); `gua report --prometheus` over the window must equal the sum of the two hosts'
// SQLite reports within one scrape interval per card (one host restarts inside the window), and
// promtool must accept the exposition.
#include "fleet/daemon_host.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>

namespace gua::fleet_testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr double k_scrape_interval_s = 1.0;

std::string iso_seconds(TimeUs t) {
    return format_iso8601(t / k_us_per_second * k_us_per_second);
}

json report(const std::vector<std::string>& source, TimeUs from, TimeUs to,
            const std::string& name) {
    std::vector<std::string> args{"report"};
    args.insert(args.end(), source.begin(), source.end());
    for (const std::string& a :
         {std::string("--from"), iso_seconds(from), std::string("--to"), iso_seconds(to),
          std::string("--format"), std::string("json"), std::string("--top"), std::string("100")}) {
        args.push_back(a);
    }
    const test::RunResult r = test::run_gua(args);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

json scenario_a() {
    return {{"driver_version", "550.54.15"},
            {"time_scale", 1},
            {"devices",
             {{{"uuid", "GPU-aaaaaaaa-0000-0000-0000-000000000000"}, {"util", {{0, 90}}}},
              {{"uuid", "GPU-aaaaaaaa-0000-0000-0000-000000000001"}, {"util", {{0, 0}}}}}},
            {"processes",
             {{{"device", 0},
               {"pid_env", "HOLDER_1"},
               {"memory_mib", {{0, 20000}}},
               {"sm_util", {{0, 90}}}},
              {{"device", 1},
               {"pid_env", "HOLDER_2"},
               {"memory_mib", {{0, 8000}}},
               {"sm_util", {{0, 0}}}}}}};
}

json scenario_b() {
    return {
        {"driver_version", "550.54.15"},
        {"time_scale", 1},
        {"devices",
         {{{"uuid", "GPU-bbbbbbbb-0000-0000-0000-000000000000"}, {"util", {{0, 0}}}},
          {{"uuid", "GPU-bbbbbbbb-0000-0000-0000-000000000001"}, {"util", {{0, 50}, {12, 0}}}}}},
        {"processes",
         {{{"device", 1},
           {"pid_env", "HOLDER_1"},
           {"memory_mib", {{0, 4000}}},
           {"sm_util", {{0, 50}, {12, 0}}}}}}};
}

/// Sum of a number over both host reports.
double sum2(const json& a, const json& b, const json::json_pointer& p) {
    return a.at(p).get<double>() + b.at(p).get<double>();
}

TEST(FleetPrometheus, ReportEqualsTheSumOfTheHostReports) {
    if (access(k_prometheus, X_OK) != 0 || access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "prometheus/promtool not installed (scripts/install-deps.sh --test)";
    }
    if (!fake_nvml_available()) {
        GTEST_SKIP() << "fake NVML not built: " << fake_nvml_library();
    }
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();
    const Holder a1(1001);
    const Holder a2(1002);
    const Holder b1(1001);
    const std::uint16_t pa = free_port();
    const std::uint16_t pb = free_port();
    const std::string ta = "127.0.0.1:" + std::to_string(pa);
    const std::string tb = "127.0.0.1:" + std::to_string(pb);
    PrometheusServer prom(dir / "prom", {ta, tb});
    ASSERT_TRUE(prom.wait_ready(30s))
        << test::read_text((dir / "prom" / "prometheus.log").string());

    DaemonHost a(dir, "host-a", scenario_a(), pa, {{"HOLDER_1", a1.pid()}, {"HOLDER_2", a2.pid()}});
    const auto start_b = [&] {
        return std::make_unique<DaemonHost>(dir, "host-b", scenario_b(), pb,
                                            Env{{"HOLDER_1", b1.pid()}});
    };
    std::unique_ptr<DaemonHost> b = start_b();
    ASSERT_TRUE(prom.wait_value("count(up == 1)", 2, 40s))
        << test::read_text(a.log()) << test::read_text(b->log());

    // promtool accepts a real scrape.
    const HttpResponse scrape = http_get(pa, "/metrics");
    ASSERT_EQ(scrape.status, 200);
    const test::RunResult lint = promtool_check_metrics(scrape.body, temp.file("scrape.txt"));
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;

    // A 20 s window inside the daemons' lifetime, on whole seconds (the report flags' precision).
    const TimeUs from = (wall_now() / k_us_per_second + 2) * k_us_per_second;
    const TimeUs to = from + 20 * k_us_per_second;
    // Host B restarts inside the window: its counters continue from its database.
    ASSERT_TRUE(wait_for([&] { return wall_now() > from + 8 * k_us_per_second; }, 20s));
    EXPECT_EQ(b->stop(), 0) << test::read_text(b->log());
    b = start_b();
    ASSERT_TRUE(wait_for([&] { return wall_now() > to + 1500 * k_us_per_ms; }, 40s));
    ASSERT_TRUE(a.running() && b->running())
        << test::read_text(a.log()) << test::read_text(b->log());
    const std::string b_log = test::read_text(b->log());
    const std::size_t restored = b_log.rfind("counters restored from ");
    ASSERT_NE(restored, std::string::npos) << b_log;
    EXPECT_NE(b_log.substr(restored + 23, 2), "0 ") << b_log;

    const json fleet = report({"--prometheus", prom.url()}, from, to, "fleet");
    const json ra = report({"--db", a.db()}, from, to, "host-a");
    const json rb = report({"--db", b->db()}, from, to, "host-b");
    ASSERT_FALSE(fleet.empty());
    ASSERT_FALSE(ra.empty());
    ASSERT_FALSE(rb.empty());

    const double cards = 4;
    const double tolerance_h = k_scrape_interval_s * cards / 3600.0;
    for (const char* state : {"active", "idle_held", "truly_idle"}) {
        const json::json_pointer p("/headline/" + std::string(state) + "_gpu_hours");
        EXPECT_NEAR(fleet.at(p).get<double>(), sum2(ra, rb, p), tolerance_h) << state;
        std::cout << "[ figures  ] " << state << ": Prometheus " << fleet.at(p).get<double>() * 3600
                  << " s, SQLite sum " << sum2(ra, rb, p) * 3600 << " s\n";
        EXPECT_GT(fleet.at(p).get<double>(), 5.0 / 3600) << state;
    }
    EXPECT_NEAR(fleet["samples"].get<double>(), sum2(ra, rb, json::json_pointer("/samples")),
                cards);
    EXPECT_EQ(fleet["waste"]["gpus_in_window"], 4);
    ASSERT_EQ(fleet["hosts"].size(), 2u);
    EXPECT_EQ(fleet["hosts"][0]["host"], ta < tb ? ta : tb);

    // §3 per host/GPU. A card whose state changes inside the window can have each edge's error
    // (a tick straddling the edge in SQLite, extrapolation in increase()) in a different state:
    // up to one interval per edge.
    for (const json* host : {&ra, &rb}) {
        for (const json& g : (*host)["gpus"]) {
            const auto it = std::find_if(fleet["gpus"].begin(), fleet["gpus"].end(),
                                         [&](const json& f) { return f["uuid"] == g["uuid"]; });
            ASSERT_NE(it, fleet["gpus"].end()) << g["uuid"];
            EXPECT_EQ((*it)["host"], host == &ra ? ta : tb);
            for (const char* state : {"active", "idle_held", "truly_idle"}) {
                const std::string key = std::string(state) + "_gpu_hours";
                EXPECT_NEAR((*it)["states"][key].get<double>(), g["states"][key].get<double>(),
                            2 * k_scrape_interval_s / 3600.0)
                    << g["uuid"] << " " << state;
            }
        }
    }

    // §4 per user across hosts: uid 1001 holds on both.
    std::map<std::string, double> users;
    for (const json* host : {&ra, &rb}) {
        for (const json& r : (*host)["identities"]["top"]) {
            users[r["name"]] += r["gpu_hours"].get<double>();
        }
    }
    ASSERT_EQ(fleet["identities"]["top"].size(), users.size());
    for (const json& r : fleet["identities"]["top"]) {
        EXPECT_NEAR(r["gpu_hours"].get<double>(), users[r["name"]], tolerance_h) << r["name"];
        EXPECT_GT(r["gpu_hours"].get<double>(), 5.0 / 3600) << r["name"];
    }

    // §7: at $1,000 per GPU-hour (the highest --price takes) the fleet's cost per state is the
    // hosts' sum within the per-card tolerance above, and so is each user's.
    const double cents_per_second = 1000.0 * 100 / 3600;
    const std::vector<std::string> price{"--price", "1000"};
    const auto with_price = [&](std::vector<std::string> source) {
        source.insert(source.end(), price.begin(), price.end());
        return source;
    };
    const json fleet_priced = report(with_price({"--prometheus", prom.url()}), from, to, "fleet $");
    const json ra_priced = report(with_price({"--db", a.db()}), from, to, "host-a $");
    const json rb_priced = report(with_price({"--db", b->db()}), from, to, "host-b $");
    const double tolerance_cents = cards * 2 * k_scrape_interval_s * cents_per_second;
    for (const char* state : {"active", "idle_held", "truly_idle"}) {
        const json::json_pointer p("/cost/total/" + std::string(state) + "_cents");
        const double hosts = sum2(ra_priced, rb_priced, p);
        EXPECT_NEAR(fleet_priced.at(p).get<double>(), hosts, tolerance_cents) << state;
        EXPECT_GT(fleet_priced.at(p).get<double>(), 5 * cents_per_second) << state;
        std::cout << "[ figures  ] cost " << state << ": Prometheus "
                  << fleet_priced.at(p).get<double>() << " cents, SQLite sum " << hosts << "\n";
    }
    std::map<std::string, double> user_cents;
    for (const json* host : {&ra_priced, &rb_priced}) {
        for (const json& r : (*host)["cost"]["identities"]) {
            user_cents[r["name"]] += r["total_cents"].get<double>();
        }
    }
    ASSERT_EQ(fleet_priced["cost"]["identities"].size(), user_cents.size());
    for (const json& r : fleet_priced["cost"]["identities"]) {
        EXPECT_NEAR(r["total_cents"].get<double>(), user_cents[r["name"]], tolerance_cents)
            << r["name"];
    }
    EXPECT_GT(fleet_priced["cost"]["waste_run_rate"]["hourly_cents"].get<double>(), 0);
    // With built-in prices each card costs what its host's report says it costs.
    for (const json* host : {&ra, &rb}) {
        for (std::size_t i = 0; i < (*host)["gpus"].size(); ++i) {
            const json& g = (*host)["gpus"][i];
            for (std::size_t k = 0; k < fleet["gpus"].size(); ++k) {
                if (fleet["gpus"][k]["uuid"] == g["uuid"]) {
                    EXPECT_EQ(fleet["cost"]["gpus"][k]["price_per_gpu_hour"],
                              (*host)["cost"]["gpus"][i]["price_per_gpu_hour"])
                        << g["uuid"];
                    EXPECT_EQ(fleet["cost"]["gpus"][k]["model"],
                              (*host)["cost"]["gpus"][i]["model"]);
                }
            }
        }
    }
    // §8 says it was not computed, never "no rule fired".
    EXPECT_EQ(fleet["recommendations"]["computed"], false);
    EXPECT_NE(fleet["recommendations"]["not_computed_reason"].get<std::string>().find("Prometheus"),
              std::string::npos);
    EXPECT_EQ(ra["recommendations"]["computed"], true);
    const test::RunResult text = test::run_gua({"report", "--prometheus", prom.url(), "--from",
                                                iso_seconds(from), "--to", iso_seconds(to)});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("not computed from Prometheus"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("no rule fired"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("no GPU cards in window"), std::string::npos) << text.out;

    EXPECT_EQ(a.stop(), 0) << test::read_text(a.log());
    EXPECT_EQ(b->stop(), 0) << test::read_text(b->log());
}

} // namespace
} // namespace gua::fleet_testing

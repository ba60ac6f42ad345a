// SPDX-License-Identifier: Apache-2.0
// packaging/grafana/gua.json without a Grafana server: the dashboard fields Grafana relies on,
// every PromQL expression parsed by promtool (each wrapped as a recording rule, with Grafana's
// variables filled in), and every metric it names present in a real `gua daemon --listen`
// exposition.
#include "fleet/daemon_host.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <set>

namespace gua::fleet_testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json dashboard() {
    std::ifstream in(std::string(GUA_SOURCE_DIR) + "/packaging/grafana/gua.json");
    return json::parse(in);
}

/// Every PromQL expression of the dashboard: panel targets and variable queries'
/// label_values() selectors, keyed by where they are.
std::vector<std::pair<std::string, std::string>> expressions(const json& d) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const json& p : d["panels"]) {
        for (const json& t : p.value("targets", json::array())) {
            out.emplace_back(
                fmt::format("panel {} {}", p["id"].get<int>(), t["refId"].get<std::string>()),
                t["expr"].get<std::string>());
        }
    }
    static const std::regex label_values(R"(label_values\((.*),\s*\w+\)$)");
    for (const json& v : d["templating"]["list"]) {
        if (v["type"] == "query") {
            std::smatch m;
            const std::string q = v["query"]["query"];
            EXPECT_TRUE(std::regex_match(q, m, label_values)) << q;
            if (!m.empty()) {
                out.emplace_back("variable " + v["name"].get<std::string>(), m[1].str());
            }
        }
    }
    return out;
}

/// Grafana's variables replaced by values PromQL accepts.
std::string filled(std::string expr) {
    for (const auto& [variable, value] :
         std::vector<std::pair<std::string, std::string>>{{"$__rate_interval", "1m"},
                                                          {"$__range", "1h"},
                                                          {"$job", ".*"},
                                                          {"$instance", ".*"},
                                                          {"$gpu", ".*"}}) {
        for (std::size_t at = expr.find(variable); at != std::string::npos;
             at = expr.find(variable)) {
            expr.replace(at, variable.size(), value);
        }
    }
    return expr;
}

TEST(GrafanaDashboard, HasTheFieldsGrafanaReads) {
    const json d = dashboard();
    EXPECT_EQ(d["uid"], "gua-gpu-usage");
    EXPECT_FALSE(d["title"].get<std::string>().empty());
    EXPECT_GE(d["schemaVersion"].get<int>(), 36);
    std::set<std::string> variables;
    for (const json& v : d["templating"]["list"]) {
        variables.insert(v["name"]);
    }
    EXPECT_EQ(variables, (std::set<std::string>{"datasource", "job", "instance", "gpu"}));
    std::set<int> ids;
    int charts = 0;
    for (const json& p : d["panels"]) {
        const std::string title = p["title"];
        EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate id " << p["id"];
        const json& g = p["gridPos"];
        EXPECT_GE(g["x"].get<int>(), 0) << title;
        EXPECT_LE(g["x"].get<int>() + g["w"].get<int>(), 24) << title;
        EXPECT_GT(g["h"].get<int>(), 0) << title;
        if (p["type"] == "row") {
            continue;
        }
        ++charts;
        EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << title;
        ASSERT_FALSE(p["targets"].empty()) << title;
        for (const json& t : p["targets"]) {
            EXPECT_FALSE(t["expr"].get<std::string>().empty()) << title;
            EXPECT_FALSE(t["refId"].get<std::string>().empty()) << title;
        }
    }
    EXPECT_GE(charts, 12);
}

TEST(GrafanaDashboard, PromtoolParsesEveryExpressionAndTheDaemonExportsEveryMetric) {
    if (access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh --test)";
    }
    if (!fake_nvml_available()) {
        GTEST_SKIP() << "fake NVML not built: " << fake_nvml_library();
    }
    const json d = dashboard();
    const auto exprs = expressions(d);
    ASSERT_GE(exprs.size(), 15u);
    const test::TempDir temp;
    const std::string rules = temp.file("dashboard-rules.yml");
    {
        std::ofstream out(rules);
        out << "groups:\n  - name: dashboard\n    rules:\n";
        int n = 0;
        for (const auto& [where, expr] : exprs) {
            out << "      - record: gua_dashboard:expr_" << ++n
                << "\n        expr: " << json(filled(expr)).dump() << "\n";
        }
    }
    const test::RunResult check = test::run(k_promtool, {"check", "rules", rules});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

    // A daemon with a price and every health reading the dashboard charts.
    const json scenario = {
        {"devices",
         {{{"uuid", "GPU-9af00000-0000-0000-0000-000000000000"},
           {"util", {{0, 60}}},
           {"power_mw", {{0, 300000}}},
           {"power_limit_mw", {{0, 700000}}},
           {"temperature_c", {{0, 55}}},
           {"memory_temperature_c", {{0, 48}}},
           {"clock_event_reasons", {{0, 4}}},
           {"sm_clock_mhz", {{0, 1700}}},
           {"max_sm_clock_mhz", {{0, 1980}}}}}},
        {"processes", {{{"device", 0}, {"pid_env", "HOLDER"}, {"memory_mib", {{0, 8000}}}}}}};
    const Holder holder(1001);
    const std::uint16_t port = free_port();
    DaemonHost host(temp.path(), "host", scenario, port, {{"HOLDER", holder.pid()}}, "1s",
                    {"--price-per-gpu-hour", "2.50"});
    std::string exposition;
    ASSERT_TRUE(wait_for(
        [&] {
            const HttpResponse r = http_get(port, "/metrics");
            exposition = r.body;
            return r.status == 200 &&
                   exposition.find("gua_identity_gpu_seconds_total{") != std::string::npos;
        },
        30s))
        << test::read_text(host.log());
    static const std::regex metric(R"(\b(gua_[a-z0-9_]+)\b)");
    std::set<std::string> named;
    for (const auto& [where, expr] : exprs) {
        for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
            named.insert((*it)[1].str());
        }
    }
    EXPECT_GE(named.size(), 14u);
    for (const std::string& name : named) {
        const bool present = exposition.find("\n" + name + "{") != std::string::npos ||
                             exposition.find("\n" + name + " ") != std::string::npos;
        EXPECT_TRUE(present) << name << " is not in the exposition:\n" << exposition;
    }
    EXPECT_EQ(host.stop(), 0) << test::read_text(host.log());
}

} // namespace
} // namespace gua::fleet_testing

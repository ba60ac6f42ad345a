// SPDX-License-Identifier: Apache-2.0
// packaging/grafana/gua.json without a Grafana server: the dashboard fields Grafana relies on,
// every PromQL expression parsed by promtool (each wrapped as a recording rule, with Grafana's
// variables filled in), every metric it names present in a real `gua daemon --listen`
// exposition, and every expression answered with data by a real Prometheus scraping a daemon on
// the default configuration whose GPU processes run in Kubernetes pods.
#include "fleet/daemon_host.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/cgroup_tree.hpp"
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

// A node as the kubelet lays it out: under `dir`, pods/<ns>_<pod>_<uid>/<container>/0.log and
// containers/<pod>_<ns>_<container>-<container id>.log linking to it.
void kubelet_logs(const std::filesystem::path& dir, const std::string& ns, const std::string& pod,
                  const std::string& uid, const std::string& container, const std::string& cid) {
    const std::filesystem::path pod_dir = dir / "pods" / (ns + "_" + pod + "_" + uid);
    std::filesystem::create_directories(pod_dir / container);
    std::ofstream(pod_dir / container / "0.log") << "x\n";
    std::filesystem::create_directories(dir / "containers");
    std::filesystem::create_symlink(pod_dir / container / "0.log",
                                    dir / "containers" /
                                        (pod + "_" + ns + "_" + container + "-" + cid + ".log"));
}

// Two GPUs held by containers of two pods (one computing, one idle-held), the daemon on the
// packaged gua.toml as shipped (no [pricing]: the example prices, as the default service), a real
// Prometheus scraping it: every panel's query and every variable's selector returns data, the
// waste panel and the Kubernetes row included.
TEST(GrafanaDashboard, EveryPanelHasDataFromAKubernetesNodeOnTheDefaultConfig) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root (processes in kubepods cgroups)";
    }
    if (access(k_prometheus, X_OK) != 0 || !fake_nvml_available()) {
        GTEST_SKIP() << "prometheus (scripts/install-deps.sh --test) or the fake NVML is missing";
    }
    const std::optional<std::filesystem::path> mount = test::find_cgroup_mount("name=systemd");
    if (!mount) {
        GTEST_SKIP() << "no cgroup v1 name=systemd hierarchy (the kubepods paths below are v1's)";
    }
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();
    const std::string pod_a = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    const std::string pod_b = "1c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    const std::string cid_a(64, 'a');
    const std::string cid_b(64, 'b');
    kubelet_logs(dir, "ml-team", "train-7d9f", pod_a, "trainer", cid_a);
    kubelet_logs(dir, "research", "notebook-0", pod_b, "jupyter", cid_b);
    test::CgroupTree tree(*mount, "gua-grafana-k8s");
    const Holder trainer(1001);
    const Holder notebook(1002);
    if (!tree.place("kubepods/burstable/pod" + pod_a + "/" + cid_a, std::stoi(trainer.pid())) ||
        !tree.place("kubepods/burstable/pod" + pod_b + "/" + cid_b, std::stoi(notebook.pid()))) {
        GTEST_SKIP() << "cgroups are not writable here";
    }
    const json gpu0 = {{"uuid", "GPU-9af00000-0000-0000-0000-000000000000"},
                       {"util", {{0, 60}}},
                       {"power_mw", {{0, 300000}}},
                       {"power_limit_mw", {{0, 700000}}},
                       {"temperature_c", {{0, 55}}},
                       {"memory_temperature_c", {{0, 48}}},
                       {"clock_event_reasons", {{0, 4}}},
                       {"sm_clock_mhz", {{0, 1700}}},
                       {"max_sm_clock_mhz", {{0, 1980}}}};
    const json gpu1 = {{"uuid", "GPU-9af10000-0000-0000-0000-000000000000"}, {"util", {{0, 0}}}};
    const json scenario = {
        {"devices", {gpu0, gpu1}},
        {"processes",
         {{{"device", 0}, {"pid_env", "TRAINER"}, {"memory_mib", {{0, 8000}}}},
          {{"device", 1}, {"pid_env", "NOTEBOOK"}, {"memory_mib", {{0, 8000}}}}}}};
    const std::uint16_t port = free_port();
    DaemonHost host(dir, "node", scenario, port,
                    {{"TRAINER", trainer.pid()},
                     {"NOTEBOOK", notebook.pid()},
                     {"GUA_POD_LOGS_DIR", (dir / "pods").string()},
                     {"GUA_CONTAINER_LOGS_DIR", (dir / "containers").string()},
                     {"GUA_DOCKER_ROOT", (dir / "docker").string()},
                     {"GUA_PODMAN_ROOT", (dir / "podman").string()}},
                    "1s", {}, test::read_text(std::string(GUA_SOURCE_DIR) + "/packaging/gua.toml"));
    PrometheusServer prometheus(dir / "prometheus", {"127.0.0.1:" + std::to_string(port)});
    ASSERT_TRUE(prometheus.wait_ready(30s))
        << test::read_text(temp.file("prometheus/prometheus.log"));
    // Ten scrapes of both containers' series: enough for every rate() of the dashboard.
    ASSERT_TRUE(prometheus.wait_value(
        R"(count_over_time(gua_identity_gpu_seconds_total{container="jupyter",state="idle_held"}[1m]))",
        10, 60s))
        << test::read_text(host.log());
    for (const auto& [where, expr] : expressions(dashboard())) {
        std::string query = filled(expr);
        for (std::size_t at = query.find("[1m]"); at != std::string::npos;
             at = query.find("[1m]")) {
            query.replace(at, 4, "[30s]");
        }
        EXPECT_NE(prometheus.value(query), -1) << where << " has no data: " << query;
    }
    // The Kubernetes row names both pods; the waste panel prices with the example prices.
    EXPECT_GT(
        prometheus.value(
            R"(sum(increase(gua_identity_gpu_seconds_total{namespace="research",pod="notebook-0",container="jupyter",state="idle_held"}[1h])))"),
        0);
    EXPECT_GT(
        prometheus.value(
            R"(sum(increase(gua_identity_gpu_seconds_total{namespace="ml-team",pod="train-7d9f",container="trainer",state="active"}[1h])))"),
        0);
    EXPECT_GT(prometheus.value(R"(sum(gua_waste_dollars_total{state="idle_held"}))"), 0);
    EXPECT_EQ(host.stop(), 0) << test::read_text(host.log());
}

} // namespace
} // namespace gua::fleet_testing

// SPDX-License-Identifier: Apache-2.0
// End to end: a canned dcgm-exporter exposition served by a tiny local HTTP server, scraped by a
// real Prometheus; `gua report --prometheus --source dcgm` turns it into the three states.
#include "export/http_server.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gua::fleet_testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// What dcgm-exporter 3.x prints for three GPUs; GPU 0's utilization and memory are parameters.
std::string dcgm_exposition(int gpu0_util, int gpu0_fb_mib) {
    const auto labels = [](int gpu) {
        return fmt::format("gpu=\"{}\",UUID=\"GPU-dcdcdcdc-0000-0000-0000-00000000000{}\","
                           "device=\"nvidia{}\",modelName=\"NVIDIA A100-SXM4-80GB\","
                           "Hostname=\"dgx-01\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"",
                           gpu, gpu, gpu);
    };
    std::string out = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
                      "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
    const std::array<int, 3> util{gpu0_util, 0, 0};
    const std::array<int, 3> fb{gpu0_fb_mib, 12000, 0};
    for (int g = 0; g < 3; ++g) {
        out += fmt::format("DCGM_FI_DEV_GPU_UTIL{{{}}} {}\n", labels(g), util[g]);
    }
    out += "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"
           "# TYPE DCGM_FI_DEV_FB_USED gauge\n";
    for (int g = 0; g < 3; ++g) {
        out += fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {}\n", labels(g), fb[g]);
    }
    out += "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
           "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n";
    for (int g = 0; g < 3; ++g) {
        out += fmt::format("DCGM_FI_DEV_POWER_USAGE{{{}}} 61.2\n", labels(g));
    }
    return out;
}

TEST(FleetDcgm, ReportFromDcgmExporterGauges) {
    if (access(k_prometheus, X_OK) != 0) {
        GTEST_SKIP() << "prometheus not installed (scripts/install-deps.sh --test)";
    }
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();

    exporter::HttpServer exporter_stub(exporter::ListenAddress{"127.0.0.1", 0}, {},
                                       "text/plain; version=0.0.4");
    exporter_stub.publish(dcgm_exposition(87, 30000));
    const std::string target = "127.0.0.1:" + std::to_string(exporter_stub.port());
    PrometheusServer prom(dir / "prom", {target}, "dcgm");
    ASSERT_TRUE(prom.wait_ready(30s));
    const TimeUs from = wall_now() / k_us_per_second * k_us_per_second;
    ASSERT_TRUE(prom.wait_value("count(up == 1)", 1, 40s));
    ASSERT_TRUE(prom.wait_value(R"(count_over_time(DCGM_FI_DEV_GPU_UTIL{gpu="0"}[2m]))", 6, 30s));
    // GPU 0's job finishes but the notebook keeps its memory: active becomes idle-held.
    exporter_stub.publish(dcgm_exposition(0, 30000));
    ASSERT_TRUE(
        prom.wait_value(R"(count_over_time((DCGM_FI_DEV_GPU_UTIL{gpu="0"} == 0)[2m:1s]))", 6, 30s));
    const TimeUs to = (wall_now() / k_us_per_second + 1) * k_us_per_second;
    ASSERT_TRUE(wait_for([&] { return wall_now() > to; }, 3s));

    const test::RunResult run = test::run_gua(
        {"report", "--prometheus", prom.url(), "--source", "dcgm", "--step", "1s", "--from",
         format_iso8601(from), "--to", format_iso8601(to), "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = json::parse(run.out);

    ASSERT_EQ(r["gpus"].size(), 3u);
    const json& g0 = r["gpus"][0];
    const json& g1 = r["gpus"][1];
    const json& g2 = r["gpus"][2];
    EXPECT_EQ(g0["uuid"], "GPU-dcdcdcdc-0000-0000-0000-000000000000");
    EXPECT_EQ(g0["model"], "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(g0["host"], target);
    EXPECT_GE(g0["states"]["active_gpu_hours"].get<double>(), 5.0 / 3600);
    EXPECT_GE(g0["states"]["idle_held_gpu_hours"].get<double>(), 5.0 / 3600);
    EXPECT_EQ(g0["states"]["truly_idle"], 0.0);
    EXPECT_EQ(g1["states"]["idle_held"], 1.0);
    EXPECT_EQ(g2["states"]["truly_idle"], 1.0);
    EXPECT_EQ(g0["efficiency"]["idle"].get<double>() + g0["efficiency"]["productive"].get<double>(),
              1.0);
    // Every 1 s step of every GPU is one card-tick of 1 s.
    const double hours = r["headline"]["active_gpu_hours"].get<double>() +
                         r["headline"]["idle_held_gpu_hours"].get<double>() +
                         r["headline"]["truly_idle_gpu_hours"].get<double>();
    EXPECT_NEAR(hours * 3600, r["samples"].get<double>(), 1e-6);
    EXPECT_NEAR(g1["samples"].get<double>(), g0["samples"].get<double>(), 1);
    EXPECT_TRUE(r["identities"]["top"].empty());
    ASSERT_FALSE(r["notes"].empty());
    EXPECT_NE(r["notes"][0].get<std::string>().find("per-user attribution needs gua's daemon"),
              std::string::npos);
    ASSERT_EQ(r["hosts"].size(), 1u);
    EXPECT_EQ(r["hosts"][0]["gpus"], 3);

    // §7 and §8 from the same card-ticks as a database report: each card's cost is its hours in
    // each state at its price (the built-in A100 price), and the recommender ran.
    ASSERT_EQ(r["cost"]["gpus"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const json& c = r["cost"]["gpus"][i];
        const double price = c["price_per_gpu_hour"].get<double>();
        EXPECT_GT(price, 0);
        for (const char* state : {"active", "idle_held", "truly_idle"}) {
            const double state_hours = r["gpus"][i]["states"][std::string(state) + "_gpu_hours"];
            EXPECT_NEAR(c[std::string(state) + "_cents"].get<double>(), state_hours * price * 100,
                        1)
                << i << " " << state;
        }
    }
    EXPECT_EQ(r["recommendations"]["computed"], true);
    EXPECT_GT(r["recommendations"]["baseline"]["window_cents"].get<double>(), 0);
}

} // namespace
} // namespace gua::fleet_testing

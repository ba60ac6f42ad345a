// SPDX-License-Identifier: Apache-2.0
// End to end: dcgm-exporter-shaped series for two A100s (one in MIG mode with three instances),
// generated from a known schedule, backfilled into a real Prometheus with promtool; `gua report
// --source dcgm` must give each instance's and card's states within 1 pp of the schedule.
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace gua::fleet_testing {
namespace dcgm_mig_test {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr DurationUs k_step = 15 * k_us_per_second;
constexpr int k_steps = 480; ///< two hours of 15 s steps in the report's window
constexpr int k_margin = 20; ///< steps written before and after the window
constexpr const char* k_model = "NVIDIA A100-SXM4-80GB";

enum class State { active, idle_held, truly_idle, unmeasured };

/// One unit (a whole card or a MIG instance) and what its series say at each step.
struct Unit {
    int gpu = 0;
    std::string uuid;
    int gpu_instance = -1; ///< -1: the whole card
    std::string profile;   ///< e.g. "3g.40gb"
    std::vector<State> state;
    std::vector<double> gr;      ///< GR_ENGINE_ACTIVE ratio; NaN: not exported at that step
    std::vector<double> util;    ///< GPU_UTIL %; NaN: not exported
    std::vector<double> fb;      ///< FB_USED MiB
    std::vector<double> sm;      ///< SM_ACTIVE ratio; NaN: not exported
    std::vector<bool> from_util; ///< the step is decided by GPU_UTIL (GR missing)
    std::string labels() const {
        std::string mig;
        if (gpu_instance >= 0) {
            mig = fmt::format(",GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\"", profile, gpu_instance);
        }
        return fmt::format("gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\","
                           "device=\"nvidia{}\",modelName=\"{}\"{},Hostname=\"dgx-a100-07\","
                           "DCGM_FI_DRIVER_VERSION=\"535.183.01\",instance=\"10.1.0.7:9400\","
                           "job=\"dcgm-exporter\"",
                           gpu, uuid, 0x07 + gpu * 0x40, gpu, k_model, mig);
    }
};

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

/// A schedule of runs of 1–40 steps in one state each (index 0 = k_margin steps before the
/// window), with readings drawn inside that state's range: active ≥ 10 % engine activity
/// (0.10 itself included), idle below it; idle-held above 100 MiB of framebuffer, truly idle at
/// or below it.
Unit schedule(std::mt19937& rng, int gpu, const std::string& uuid, int gi,
              const std::string& profile, double fb_max) {
    Unit u{gpu, uuid, gi, profile, {}, {}, {}, {}, {}, {}};
    const int n = k_steps + 2 * k_margin;
    std::uniform_int_distribution<int> run_length(1, 40);
    std::uniform_int_distribution<int> pick(0, 2);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    while (static_cast<int>(u.state.size()) < n) {
        const auto s = static_cast<State>(pick(rng));
        const bool light = unit(rng) < 0.4;
        for (int k = run_length(rng); k > 0 && static_cast<int>(u.state.size()) < n; --k) {
            u.state.push_back(s);
            double gr = 0;
            if (s == State::active) {
                gr = unit(rng) < 0.05 ? 0.10 : std::round((0.10 + 0.9 * unit(rng)) * 1000) / 1000;
            } else {
                gr = std::floor(0.099 * unit(rng) * 1000) / 1000;
            }
            u.gr.push_back(gr);
            // Device utilization says the same state: at least 10 when active, at most 9 when not.
            u.util.push_back(s == State::active ? std::max(10.0, std::round(gr * 100))
                                                : std::min(9.0, std::round(gr * 100)));
            u.fb.push_back(s == State::truly_idle ? std::floor(100 * unit(rng))
                                                  : std::round(101 + (fb_max - 101) * unit(rng)));
            u.sm.push_back(s != State::active ? gr * 0.8
                           : light            ? 0.02 + 0.17 * unit(rng)
                                              : 0.3 + 0.65 * unit(rng));
            u.from_util.push_back(false);
        }
    }
    return u;
}

/// OpenMetrics for promtool: every unit's series at every step, time by time.
std::string openmetrics(const std::vector<Unit>& units, TimeUs start, bool parent_fb) {
    std::string out;
    const int n = k_steps + 2 * k_margin;
    for (int k = 0; k < n; ++k) {
        const TimeUs t = start + k * k_step;
        const std::string ts = fmt::format(" {}.000\n", t / k_us_per_second);
        double parent_fb_mib = 0;
        for (const Unit& u : units) {
            const auto put = [&](const char* metric, double v) {
                if (!std::isnan(v)) {
                    out += fmt::format("{}{{{}}} {}", metric, u.labels(), v) + ts;
                }
            };
            put("DCGM_FI_PROF_GR_ENGINE_ACTIVE", u.gr[k]);
            put("DCGM_FI_DEV_FB_USED", u.fb[k]);
            put("DCGM_FI_PROF_SM_ACTIVE", u.sm[k]);
            if (u.gpu_instance < 0) {
                put("DCGM_FI_DEV_GPU_UTIL", u.util[k]);
                put("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", u.sm[k] * 0.5);
                put("DCGM_FI_PROF_DRAM_ACTIVE", u.gr[k] * 0.3);
            } else {
                parent_fb_mib += u.fb[k];
            }
        }
        if (parent_fb) { // the MIG card's own framebuffer series, as a whole GPU entity
            Unit parent = units.front();
            parent.gpu_instance = -1;
            out += fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {}", parent.labels(), parent_fb_mib) + ts;
        }
    }
    return out + "# EOF\n";
}

/// The truth over the window's steps: each state's share, and the share decided by DCGM
/// profiling (GR_ENGINE_ACTIVE present and a state decided).
struct Truth {
    std::array<double, 4> share{};
    double profiling = 0;
    double snapshot = 0;
    double sm_mean = 0;     ///< SM active over active steps
    double light_share = 0; ///< active steps with SM active under 20 %
};

Truth truth_of(const Unit& u) {
    Truth t;
    double active = 0;
    double sm_sum = 0;
    double light = 0;
    for (int k = k_margin; k < k_margin + k_steps; ++k) {
        t.share[static_cast<std::size_t>(u.state[k])] += 1.0 / k_steps;
        if (u.state[k] != State::unmeasured) {
            (u.from_util[k] ? t.snapshot : t.profiling) += 1.0 / k_steps;
        }
        if (u.state[k] == State::active) {
            ++active;
            sm_sum += u.sm[k];
            light += u.sm[k] < 0.2 ? 1 : 0;
        }
    }
    t.sm_mean = active > 0 ? sm_sum / active : 0;
    t.light_share = active > 0 ? light / active : 0;
    return t;
}

TEST(FleetDcgmProfiling, MigInstancesOfA100sAreMeasuredFromGrEngineActive) {
    if (access(k_prometheus, X_OK) != 0 || access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "prometheus not installed (scripts/install-deps.sh --test)";
    }
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();
    std::mt19937 rng(20261129);
    const std::string card0 = "GPU-5a1e0c3d-7f21-4b8e-9a44-0d1c2e3f4a50";
    const std::string card1 = "GPU-5a1e0c3d-7f21-4b8e-9a44-0d1c2e3f4a51";
    std::vector<Unit> units{
        schedule(rng, 0, card0, 1, "3g.40gb", 40000), schedule(rng, 0, card0, 5, "2g.20gb", 20000),
        schedule(rng, 0, card0, 13, "1g.10gb", 10000), schedule(rng, 1, card1, -1, "", 80000)};
    // Profiling paused for the 1g.10gb instance for 15 minutes (dcgmi profile --pause while a
    // user runs Nsight): framebuffer still read, no engine activity → unmeasured there.
    for (int k = k_margin + 200; k < k_margin + 260; ++k) {
        units[2].gr[k] = k_nan;
        units[2].sm[k] = k_nan;
        units[2].state[k] = State::unmeasured;
    }
    // The whole card loses GR_ENGINE_ACTIVE for 20 minutes but keeps GPU_UTIL: decided by it.
    for (int k = k_margin + 300; k < k_margin + 380; ++k) {
        units[3].gr[k] = k_nan;
        units[3].from_util[k] = true;
    }
    // Two hours ending at least an hour ago, on whole steps.
    const TimeUs from = (wall_now() - 4 * k_us_per_hour) / k_us_per_hour * k_us_per_hour;
    const TimeUs to = from + k_steps * k_step;
    const std::filesystem::path om = dir / "dcgm.om";
    std::ofstream(om) << openmetrics(units, from - k_margin * k_step, true);
    const test::RunResult backfill =
        test::run(k_promtool, {"tsdb", "create-blocks-from", "openmetrics", om.string(),
                               (dir / "prom" / "data").string()});
    ASSERT_EQ(backfill.exit_code, 0) << backfill.out << backfill.err;

    PrometheusServer prom(dir / "prom", {}, "dcgm");
    ASSERT_TRUE(prom.wait_ready(30s));
    const std::vector<std::string> args{"report",
                                        "--prometheus",
                                        prom.url(),
                                        "--source",
                                        "dcgm",
                                        "--step",
                                        "15s",
                                        "--host-label",
                                        "Hostname",
                                        "--from",
                                        format_iso8601(from),
                                        "--to",
                                        format_iso8601(to)};
    std::vector<std::string> json_args = args;
    json_args.insert(json_args.end(), {"--format", "json"});
    const test::RunResult run = test::run_gua(json_args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = json::parse(run.out);

    // The MIG card is its three instances (its own framebuffer series left out); the other card
    // is itself.
    ASSERT_EQ(r["gpus"].size(), 4u) << r["gpus"].dump(1);
    const std::array<const char*, 4> names{"3g.40gb", "2g.20gb", "1g.10gb", ""};
    const std::array<double, 4> fractions{3.0 / 7, 2.0 / 7, 1.0 / 7, 1.0};
    double worst_pp = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
        const json& g = r["gpus"][i];
        const Unit& u = units[i];
        const Truth t = truth_of(u);
        EXPECT_EQ(g["host"], "dgx-a100-07");
        EXPECT_EQ(g["index"], u.gpu);
        const std::string model =
            u.gpu_instance < 0 ? std::string(k_model) : std::string(k_model) + " MIG " + names[i];
        EXPECT_EQ(g["model"], model);
        if (u.gpu_instance >= 0) {
            EXPECT_EQ(g["uuid"], fmt::format("{}/gi{}", u.uuid, u.gpu_instance));
        }
        const std::array<const char*, 4> keys{"active", "idle_held", "truly_idle", "unmeasured"};
        for (std::size_t s = 0; s < 4; ++s) {
            const double got = g["states"][keys[s]].get<double>();
            const double pp = std::abs(got - t.share[s]) * 100;
            worst_pp = std::max(worst_pp, pp);
            std::cout << fmt::format("{} {:>10}: {:.4f} truth {:.4f} ({:.2f} pp)\n", model, keys[s],
                                     got, t.share[s], pp);
            EXPECT_LE(pp, 1.0) << model << " " << keys[s];
        }
        const json& p = g["provenance"];
        const double profiling = p.value("dcgm_profiling_share", 0.0);
        EXPECT_NEAR(profiling, t.profiling, 0.01) << model;
        EXPECT_NEAR(p["snapshot_share"].get<double>(), t.snapshot, 0.01) << model;
        EXPECT_NEAR(r["cost"]["gpus"][i]["card_fraction"].get<double>(), fractions[i], 1e-9);
    }
    std::cout << fmt::format("worst state error {:.2f} pp\n", worst_pp);
    // The unmeasured window is the paused instance's only: no reading, never idle.
    EXPECT_NEAR(r["gpus"][2]["provenance"]["no_reading_gpu_hours"].get<double>(), 60 * 15.0 / 3600,
                15.0 / 3600 + 1e-9);
    EXPECT_GT(r["provenance"]["dcgm_profiling_share"].get<double>(), 0.9);

    // Busy but light on Ampere: SM active from DCGM stands in for GPM's.
    const Truth whole = truth_of(units[3]);
    const json& h = r["health"]["gpus"][3];
    EXPECT_NEAR(h["gpm"]["sm_active"]["mean"].get<double>(), whole.sm_mean, 0.01);
    EXPECT_EQ(h["busy_but_light"]["by"], "gpm");
    EXPECT_NEAR(h["busy_but_light"]["share"].get<double>(), whole.light_share, 0.01);
    std::cout << fmt::format("sm_active mean {:.4f} truth {:.4f}; light {:.4f} truth {:.4f}\n",
                             h["gpm"]["sm_active"]["mean"].get<double>(), whole.sm_mean,
                             h["busy_but_light"]["share"].get<double>(), whole.light_share);

    const test::RunResult text = test::run_gua(args);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("DCGM profiling"), std::string::npos) << text.out;
}

} // namespace dcgm_mig_test
} // namespace gua::fleet_testing

// SPDX-License-Identifier: Apache-2.0
// Interconnect and bus health end to end: the real `gua daemon` on the fake driver with a
// simulated clock, then `gua report`. Card 0's PCIe link drops from gen5 x16 to gen3 x8 while it
// works (and stays there once idle), its PCIe replays climb and its row remapper fails; card 1's
// NVLink CRC errors climb at a known rate and a link goes down 20 s in; card 2's driver answers
// NOT_SUPPORTED for all of it. Expected figures come from the scenario below.
#include "e2e/truth_harness.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gua::e2e {
namespace fabric_report_test { // named after the file: unique in a unity batch

constexpr double k_start_s = 600;
constexpr double k_interval_s = 5;
constexpr int k_ticks = 24; // [600, 720)
constexpr double k_end_s = k_start_s + k_interval_s * k_ticks;
constexpr double k_after = 0.001; // changes lie 1 ms after a poll
constexpr double k_crc_per_s = 200;
constexpr double k_pcie_replays_per_s = 2;
constexpr double k_link_down_s = k_start_s + 20;
constexpr double k_degraded_s = 640; // card 0 at gen3 x8 from here on
constexpr double k_idle_s = 690;     // card 0 idle from here on
constexpr double k_remap_failed_s = 700;
constexpr double k_bus_hold_s = 30; // link states are read at most this often (bus_poll.hpp)

std::string uuid(int i) {
    return fmt::format("GPU-fab0{:04d}-0000-0000-0000-000000000000", i);
}

/// A counter climbing `per_s` per second from 0 at scenario time 0, one step a second.
json climbing(double per_s) {
    json points = json::array();
    for (int t = 0; t <= static_cast<int>(k_end_s) + 10; ++t) {
        points.push_back({t + k_after, per_s * t});
    }
    return points;
}

json scenario() {
    return {{"devices",
             {{{"uuid", uuid(0)},
               {"util", {{0, 90}, {k_idle_s + k_after, 0}}},
               {"pcie",
                {{"gen", {{0, 5}, {k_degraded_s + k_after, 3}}},
                 {"width", {{0, 16}, {k_degraded_s + k_after, 8}}}}},
               {"pcie_replays", climbing(k_pcie_replays_per_s)},
               {"remap_failure", {{0, 0}, {k_remap_failed_s + k_after, 1}}}},
              {{"uuid", uuid(1)},
               {"util", {{0, 90}}},
               {"nvlink",
                {{"links", 18},
                 {"down_at", {{3, k_link_down_s + k_after}}},
                 {"crc_flit", climbing(k_crc_per_s)}}}},
              {{"uuid", uuid(2)},
               {"util", {{0, 90}}},
               {"unsupported_fields", {94, 145}},
               {"not_supported",
                {"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
                 "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth"}}}}}};
}

double seconds_of(const json& iso, double report_start_s, TimeUs first_us) {
    const TimeUs t = parse_iso8601(iso.get<std::string>()).value();
    return report_start_s + static_cast<double>(t - first_us) / 1e6;
}

class FabricReport : public TruthTest {
  protected:
    void run() {
        write_scenario(scenario());
        set_clock(k_start_s);
        set_env("GUA_TEST_CLOCK_FILE", clock_path());
        const test::RunResult d =
            run_daemon({"--interval", fmt::format("{}ms", std::llround(k_interval_s * 1000)),
                        "--ticks", std::to_string(k_ticks), "--quiet"},
                       FakeVariant::modern, 60s);
        ASSERT_EQ(d.exit_code, 0) << d.err;
        write_atomically(config_path(), "");
        test::RawDb raw(db());
        m_first_us = std::stoll(raw.rows("SELECT min(t0_us) AS t FROM card_tick").at(0).at("t"));
    }

    std::string report(const std::string& format) const {
        const test::RunResult r = test::run_gua({"report", "--db", db(), "--config", config_path(),
                                                 "--from", "2000-01-01T00:00:00Z", "--to",
                                                 "2100-01-01T00:00:00Z", "--format", format});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    }

    /// Scenario time of an ISO time of the report.
    double at(const json& iso) const { return seconds_of(iso, k_start_s, m_first_us); }

    TimeUs m_first_us = 0;
};

const json& finding(const json& findings, const std::string& id, int gpu) {
    static const json none;
    for (const json& f : findings) {
        if (f["id"] == id && f["gpu"] == gpu) {
            return f;
        }
    }
    return none;
}

TEST_F(FabricReport, FindingsNameTheCardTheRateAndTheTime) {
    run();
    const json j = json::parse(report("json"));
    const json& health = j.at("health");
    const json& findings = health.at("findings");
    const json& gpus = health.at("gpus");
    ASSERT_EQ(gpus.size(), 3U);

    // Card 1: CRC errors at 200/s over the time read (the first poll only sets the counter).
    const json& crc = gpus[1]["fabric"]["nvlink"]["errors"]["crc"];
    ASSERT_TRUE(crc.is_object()) << gpus[1].dump();
    EXPECT_NEAR(crc["per_hour"].get<double>(), k_crc_per_s * 3600, 0.02 * k_crc_per_s * 3600);
    EXPECT_FALSE(finding(findings, "nvlink-errors", 1).is_null()) << findings.dump();
    EXPECT_TRUE(finding(findings, "nvlink-errors", 0).is_null()) << "card 0 has no NVLink";
    // Link 3 down from 20 s in: seen once the held link states are read again (≤ 30 s) and
    // recorded at the end of that tick; the fewest active 17 of 18.
    const json& nv = gpus[1]["fabric"]["nvlink"];
    EXPECT_EQ(nv["links"], 18);
    EXPECT_EQ(nv["links_active_min"], 17);
    const double down_from = at(nv["links_down_from"]);
    EXPECT_GE(down_from, k_link_down_s - k_interval_s);
    EXPECT_LE(down_from, k_link_down_s + k_bus_hold_s + k_interval_s);
    EXPECT_NEAR(nv["links_down_gpu_hours"].get<double>() * 3600, k_end_s - k_link_down_s,
                k_bus_hold_s + k_interval_s);
    EXPECT_FALSE(finding(findings, "nvlink-down", 1).is_null());

    // Card 0: below gen5 x16 over [640, 690) of its active [600, 690): the idle rest at gen3
    // does not count; one tick of tolerance each side.
    const json& pcie = gpus[0]["fabric"]["pcie"];
    const double share = (k_idle_s - k_degraded_s) / (k_idle_s - k_start_s);
    EXPECT_NEAR(pcie["degraded_active_share"].get<double>(), share,
                k_interval_s / (k_idle_s - k_start_s) + 1e-9);
    EXPECT_EQ(pcie["lowest_gen"], 3);
    EXPECT_EQ(pcie["lowest_width"], 8);
    EXPECT_EQ(pcie["gen_max"], 5);
    EXPECT_NEAR(at(pcie["degraded_from"]), k_degraded_s, k_interval_s);
    EXPECT_NEAR(at(pcie["degraded_to"]), k_idle_s, k_interval_s);
    const json& degraded = finding(findings, "pcie-degraded", 0);
    ASSERT_FALSE(degraded.is_null()) << findings.dump();
    EXPECT_NEAR(degraded["share"].get<double>(), share, k_interval_s / (k_idle_s - k_start_s));
    EXPECT_TRUE(finding(findings, "pcie-degraded", 1).is_null());
    EXPECT_NEAR(pcie["replays_per_hour"].get<double>(), k_pcie_replays_per_s * 3600,
                0.02 * k_pcie_replays_per_s * 3600);
    EXPECT_FALSE(finding(findings, "pcie-replays", 0).is_null()) << "7200/h is above 480/h";
    const json& remap = finding(findings, "row-remap-failure", 0);
    ASSERT_FALSE(remap.is_null());
    EXPECT_NEAR(gpus[0]["fabric"]["row_remap_failed_gpu_hours"].get<double>() * 3600,
                k_end_s - k_remap_failed_s, k_interval_s);

    // Card 2: NOT_SUPPORTED everywhere: n/a (null), no finding.
    const json& none = gpus[2]["fabric"];
    EXPECT_TRUE(none["nvlink"].is_null()) << none.dump();
    EXPECT_TRUE(none["pcie"].is_null()) << none.dump();
    EXPECT_TRUE(none["row_remap_failed_gpu_hours"].is_null()) << none.dump();
    for (const char* id :
         {"nvlink-errors", "nvlink-down", "pcie-degraded", "pcie-replays", "row-remap-failure"}) {
        EXPECT_TRUE(finding(findings, id, 2).is_null()) << id;
    }
}

TEST_F(FabricReport, TextShowsTheFiguresAndNaForTheCardWithout) {
    run();
    const std::string text = report("text");
    EXPECT_NE(text.find("interconnect and bus"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU 2  NVLink errors replay n/a, recovery n/a, crc n/a; links n/a; "
                        "PCIe link n/a, replays n/a; row remapper n/a"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("nvlink-errors: GPU 1: NVLink crc errors at"), std::string::npos) << text;
    EXPECT_NE(text.find("row-remap-failure: GPU 0"), std::string::npos) << text;
}

} // namespace fabric_report_test
} // namespace gua::e2e

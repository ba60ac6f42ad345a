// SPDX-License-Identifier: Apache-2.0
// Interconnect and bus totals and their §9 findings: NVLink error rates per hour of the time read,
// links down with when, PCIe below its maximum counted over active time only, PCIe replays from
// the running counter, row-remap failure; a card without the readings gets n/a and no finding.
#include "audit/health.hpp"
#include "audit/health_fabric.hpp"
#include "audit/health_findings.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::audit {
namespace health_fabric_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767571200LL * k_us_per_second; // 2026-01-05T00:00:00Z
constexpr DurationUs k_dur = 30 * k_us_per_second;
constexpr int k_ticks = 10;

CardTick tick_at(int k) {
    CardTick t;
    t.t0 = k_t0 + k * k_dur;
    t.duration_us = k_dur;
    return t;
}

StateTimes states_of(DurationUs active) {
    StateTimes s;
    s.active = active;
    s.truly_idle = k_dur - active;
    return s;
}

const HealthFinding* find(const std::vector<HealthFinding>& f, const std::string& id) {
    const auto it =
        std::find_if(f.begin(), f.end(), [&](const HealthFinding& x) { return x.id == id; });
    return it == f.end() ? nullptr : &*it;
}

/// Ten 30 s ticks: CRC errors 200 per second, no replays, recoveries not read; link 3 of 18 down
/// from tick 4; active in ticks 0–5, PCIe at gen3 x8 of gen5 x16 from tick 3 (three active
/// ticks and four idle ones); PCIe replay counter +10 per tick; the remapper fine.
FabricTotals sample() {
    FabricTotals t;
    for (int k = 0; k < k_ticks; ++k) {
        CardTick c = tick_at(k);
        telemetry::CardReadings& r = c.readings;
        r.nvlink_crc_errors = 200 * 30;
        r.nvlink_replays = 0;
        r.nvlink_links = 18;
        r.nvlink_links_active = k >= 4 ? 17 : 18;
        r.pcie_gen_max = 5;
        r.pcie_width_max = 16;
        r.pcie_gen = k >= 3 ? 3 : 5;
        r.pcie_width = k >= 3 ? 8 : 16;
        r.pcie_replays = 1000 + 10 * k;
        r.remap_failure = 0;
        add_fabric(c, states_of(k <= 5 ? k_dur : 0), t);
    }
    return t;
}

TEST(HealthFabric, RatesSharesAndSpansFollowTheTicks) {
    const FabricTotals t = sample();
    const double hours = 10 * 30 / 3600.0;
    ASSERT_TRUE(t.nvlink_rate(NvlinkError::crc).has_value());
    EXPECT_NEAR(*t.nvlink_rate(NvlinkError::crc), 200 * 30 * 10 / hours, 1e-6);
    EXPECT_DOUBLE_EQ(*t.nvlink_rate(NvlinkError::replay), 0);
    EXPECT_EQ(t.nvlink_rate(NvlinkError::recovery), std::nullopt) << "never read: n/a, not 0";
    EXPECT_EQ(t.nvlink_errors_seen.first_us, k_t0);
    EXPECT_EQ(t.links_down_us, 6 * k_dur);
    EXPECT_EQ(t.links_down_seen.first_us, k_t0 + 4 * k_dur);
    EXPECT_EQ(t.links_down_seen.last_end_us, k_t0 + 10 * k_dur);
    EXPECT_EQ(t.links_active_min, 17);
    EXPECT_EQ(t.pcie_known_active_us, 6 * k_dur) << "idle ticks do not count";
    EXPECT_EQ(t.pcie_degraded_active_us, 3 * k_dur);
    EXPECT_EQ(t.pcie_degraded_seen.first_us, k_t0 + 3 * k_dur);
    EXPECT_EQ(t.pcie_degraded_seen.last_end_us, k_t0 + 6 * k_dur);
    // The first reading only sets where the counter stands: nine increases of 10.
    EXPECT_EQ(t.pcie_replays, 90);
    EXPECT_NEAR(*t.pcie_replay_rate(), 90 / (9 * 30 / 3600.0), 1e-9);
    EXPECT_EQ(t.remap_known_us, 10 * k_dur);
    EXPECT_EQ(t.remap_failed_us, 0);
}

TEST(HealthFabric, FindingsNameTheCardRateAndTime) {
    std::vector<HealthFinding> f;
    add_fabric_findings(1, sample(), f);
    const HealthFinding* crc = find(f, "nvlink-errors");
    ASSERT_NE(crc, nullptr);
    EXPECT_EQ(crc->gpu, 1);
    EXPECT_NE(crc->detail.find("crc errors at 720000 per hour"), std::string::npos) << crc->detail;
    EXPECT_EQ(std::count_if(f.begin(), f.end(),
                            [](const HealthFinding& x) { return x.id == "nvlink-errors"; }),
              1)
        << "no replay errors: only CRC";
    const HealthFinding* down = find(f, "nvlink-down");
    ASSERT_NE(down, nullptr);
    EXPECT_NEAR(down->share, 0.6, 1e-12);
    EXPECT_NE(down->detail.find("17 of 18"), std::string::npos) << down->detail;
    EXPECT_NE(down->detail.find("from 2026-01-05T00:02:00Z"), std::string::npos) << down->detail;
    const HealthFinding* pcie = find(f, "pcie-degraded");
    ASSERT_NE(pcie, nullptr);
    EXPECT_NEAR(pcie->share, 0.5, 1e-12);
    EXPECT_NE(pcie->detail.find("as low as gen3 x8"), std::string::npos) << pcie->detail;
    ASSERT_NE(find(f, "pcie-replays"), nullptr) << "1200 per hour is above 480";
    EXPECT_EQ(find(f, "row-remap-failure"), nullptr);
}

TEST(HealthFabric, BelowTheLimitsAndNeverReadGiveNoFinding) {
    FabricTotals quiet;
    FabricTotals none;
    for (int k = 0; k < k_ticks; ++k) {
        CardTick c = tick_at(k);
        c.readings.nvlink_crc_errors = 99 * 30; // under 100 per second
        c.readings.pcie_replays = 4 * k;        // 480 per hour: not above
        c.readings.pcie_gen = 4;                // below gen5 only while idle
        c.readings.pcie_gen_max = 5;
        c.readings.pcie_width = 16;
        c.readings.pcie_width_max = 16;
        add_fabric(c, states_of(0), quiet);
        add_fabric(tick_at(k), states_of(k_dur), none);
    }
    std::vector<HealthFinding> f;
    add_fabric_findings(0, quiet, f);
    add_fabric_findings(1, none, f);
    EXPECT_TRUE(f.empty()) << f.front().detail;
    EXPECT_EQ(quiet.pcie_known_active_us, 0);
    EXPECT_EQ(none.nvlink_rate(NvlinkError::crc), std::nullopt);
    EXPECT_EQ(none.pcie_replay_rate(), std::nullopt);
    EXPECT_EQ(none, FabricTotals{}) << "a card whose driver gives nothing adds nothing";
}

TEST(HealthFabric, SumsOfPartsEqualTheWhole) {
    FabricTotals whole = sample();
    FabricTotals a;
    FabricTotals b;
    for (int k = 0; k < k_ticks; ++k) {
        CardTick c = tick_at(k);
        c.readings.nvlink_crc_errors = 200 * 30;
        c.readings.nvlink_links = 18;
        c.readings.nvlink_links_active = k >= 4 ? 17 : 18;
        add_fabric(c, states_of(k_dur), k < 5 ? a : b);
    }
    a += b;
    EXPECT_EQ(a.nvlink_errors, whole.nvlink_errors);
    EXPECT_EQ(a.links_down_us, whole.links_down_us);
    EXPECT_EQ(a.links_down_seen, whole.links_down_seen);
    EXPECT_EQ(a.links_active_min, 17);
}

TEST(HealthFabric, IdleTicksCountThroughTheHealthTotals) {
    HealthTotals h;
    CardTick c = tick_at(0);
    c.readings.remap_failure = 1;
    c.readings.nvlink_links = 18;
    c.readings.nvlink_links_active = 16;
    add_health(c, states_of(0), h);
    EXPECT_EQ(h.fabric.remap_failed_us, k_dur) << "a failure on an idle card still counts";
    EXPECT_EQ(h.fabric.links_down_us, k_dur);
    EXPECT_EQ(h.fabric.links_active_min, 16);
}

} // namespace health_fabric_test
} // namespace gua::audit

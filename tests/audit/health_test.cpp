// SPDX-License-Identifier: Apache-2.0
// Health totals: a tick's energy from the counter or power × time (never 0 for n/a), its split by
// state, the identities' energy adding up to the attributed states' energy, rescaled overlaps and
// electricity cost.
#include "audit/health.hpp"
#include "audit/rescale.hpp"
#include "audit/window.hpp"

#include <gtest/gtest.h>

namespace gua::audit {
namespace health_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767571200LL * k_us_per_second; // 2026-01-05T00:00:00Z
constexpr DurationUs k_dur = 30 * k_us_per_second;

std::pair<int, int> any_cell(TimeUs) {
    return {3, 3};
}

CardTick tick(std::uint32_t gpu, TimeUs t0, DurationUs active, std::vector<ProcTick> procs) {
    CardTick t;
    t.gpu = gpu;
    t.t0 = t0;
    t.duration_us = k_dur;
    t.active_us = active;
    t.processes = std::move(procs);
    return t;
}

ProcTick proc(std::uint32_t identity, std::int64_t mib, double sm) {
    return ProcTick{identity, telemetry::ProcessType::compute, mib, sm, std::nullopt, std::nullopt};
}

TEST(Health, TickEnergyPrefersTheCounterThenPowerTimesTimeElseNone) {
    CardTick t = tick(0, k_t0, k_dur, {});
    EXPECT_EQ(tick_energy(t), std::nullopt) << "no reading is n/a, not 0";
    t.readings.power_mw = 250'000; // 250 W × 30 s = 7500 J
    ASSERT_TRUE(tick_energy(t).has_value());
    EXPECT_EQ(tick_energy(t)->mj, 7'500'000);
    EXPECT_FALSE(tick_energy(t)->from_counter);
    t.readings.energy_mj = 7'123'000;
    EXPECT_EQ(tick_energy(t)->mj, 7'123'000);
    EXPECT_TRUE(tick_energy(t)->from_counter);
}

TEST(Health, EnergySplitsByStateAndSumsExactly) {
    HealthTotals h;
    // 10 s active, 20 s idle-held (a holder with 8 GiB): 3000 J → 1000 J active, 2000 J held.
    CardTick t = tick(0, k_t0, 10 * k_us_per_second, {proc(1, 8192, 0)});
    t.readings.energy_mj = 3'000'000;
    add_health(t, classify(t, Thresholds{}), h);
    EXPECT_EQ(h.energy.counter_mj, 3'000'000);
    EXPECT_EQ(h.energy.counter_us, k_dur);
    EXPECT_EQ(h.energy.power_us, 0);
    EXPECT_EQ(h.energy.state_mj[0], 1'000'000);
    EXPECT_EQ(h.energy.state_mj[1], 2'000'000);
    EXPECT_EQ(h.energy.state_mj[2], 0);
    // A tick with power only, truly idle: 60 W × 30 s = 1800 J, counted as power × time.
    CardTick idle = tick(0, k_t0 + k_dur, 0, {});
    idle.readings.power_mw = 60'000;
    add_health(idle, classify(idle, Thresholds{}), h);
    EXPECT_EQ(h.energy.power_mj, 1'800'000);
    EXPECT_EQ(h.energy.power_us, k_dur);
    EXPECT_EQ(h.energy.state_mj[2], 1'800'000);
    EXPECT_EQ(h.energy.total_mj(), 4'800'000);
    // A tick without utilization: its energy is all "unmeasured".
    CardTick mig = tick(0, k_t0 + 2 * k_dur, 0, {});
    mig.active_us = std::nullopt;
    mig.readings.energy_mj = 999;
    add_health(mig, classify(mig, Thresholds{}), h);
    EXPECT_EQ(h.energy.state_mj[3], 999);
    // A tick without any reading adds nothing and covers no time.
    add_health(tick(0, k_t0 + 3 * k_dur, k_dur, {}), StateTimes{k_dur, 0, 0, 0}, h);
    EXPECT_EQ(h.energy.known_us(), 3 * k_dur);
    std::int64_t sum = 0;
    for (std::int64_t s : h.energy.state_mj) {
        sum += s;
    }
    EXPECT_EQ(sum, h.energy.total_mj());
}

TEST(Health, IdentitiesGetTheEnergyOfTheirAttributedTime) {
    WindowAccumulator acc(Thresholds{}, 0, any_cell);
    // Identities 1 and 2 share an active tick 3:1 by SM; then 1 holds the card idle.
    CardTick busy = tick(0, k_t0, k_dur, {proc(1, 4000, 60), proc(2, 4000, 20)});
    busy.readings.energy_mj = 12'000'000;
    acc.add(busy);
    CardTick held = tick(0, k_t0 + k_dur, 0, {proc(1, 4000, 0)});
    held.readings.energy_mj = 2'000'000;
    acc.add(held);
    // Truly idle and unread: nobody's.
    CardTick idle = tick(0, k_t0 + 2 * k_dur, 0, {});
    idle.readings.power_mw = 50'000;
    acc.add(idle);
    acc.add(tick(0, k_t0 + 3 * k_dur, k_dur, {proc(2, 4000, 50)}));
    EXPECT_EQ(acc.identities()[1].health.energy_mj, 9'000'000 + 2'000'000);
    EXPECT_EQ(acc.identities()[1].health.energy_us, k_dur * 3 / 4 + k_dur);
    EXPECT_EQ(acc.identities()[2].health.energy_mj, 3'000'000);
    EXPECT_EQ(acc.identities()[2].health.energy_us, k_dur / 4) << "the unread tick covers none";
    const EnergyTotals& e = acc.gpus()[0].health.energy;
    EXPECT_EQ(e.state_mj[0] + e.state_mj[1],
              acc.identities()[1].health.energy_mj + acc.identities()[2].health.energy_mj)
        << "identity energy adds up to the active + idle-held energy (no double counting)";
    EXPECT_EQ(e.state_mj[2], 1'500'000);
}

TEST(Health, AnOverlappingTickCountsItsEnergyOnce) {
    WindowAccumulator acc(Thresholds{}, 0, any_cell);
    CardTick a = tick(0, k_t0, k_dur, {});
    a.readings.energy_mj = 3'000'000;
    acc.add(a);
    CardTick b = tick(0, k_t0 + k_dur / 3, k_dur, {}); // its first 20 s are a's
    b.readings.energy_mj = 3'000'000;
    acc.add(b);
    EXPECT_EQ(acc.gpus()[0].health.energy.counter_mj, 3'000'000 + 1'000'000);
    EXPECT_EQ(acc.gpus()[0].health.energy.counter_us, k_dur + k_dur / 3);
}

TEST(Health, RescaleScalesEnergyAndClockEventTime) {
    CardTick t = tick(0, k_t0, k_dur, {});
    t.readings.energy_mj = 3000;
    t.readings.clocks_hw_thermal_us = 15 * k_us_per_second;
    t.readings.power_mw = 100'000;
    rescale(t, 2 * k_dur);
    EXPECT_EQ(t.readings.energy_mj, 6000);
    EXPECT_EQ(t.readings.clocks_hw_thermal_us, 30 * k_us_per_second);
    EXPECT_EQ(t.readings.power_mw, 100'000) << "a rate is not scaled";
}

TEST(Health, ThrottleCountsReasonsWithinActiveTimeAndClocksByActiveTime) {
    HealthTotals h;
    // 10 s active of 30 s; the power cap is seen 30 s (counted 10 s), hardware thermal 4 s.
    CardTick t = tick(0, k_t0, 10 * k_us_per_second, {});
    t.readings.clocks_sw_power_cap_us = 30 * k_us_per_second;
    t.readings.clocks_hw_thermal_us = 4 * k_us_per_second;
    t.readings.clocks_sw_thermal_us = 0;
    t.readings.sm_clock_mhz = 990;
    t.readings.max_sm_clock_mhz = 1980;
    add_health(t, classify(t, Thresholds{}), h);
    // 30 s active without reasons read but with clocks at their highest.
    CardTick busy = tick(0, k_t0 + k_dur, k_dur, {});
    busy.readings.sm_clock_mhz = 1980;
    busy.readings.max_sm_clock_mhz = 1980;
    add_health(busy, classify(busy, Thresholds{}), h);
    const ThrottleTotals& th = h.throttle;
    EXPECT_EQ(th.events_active_us, 10 * k_us_per_second) << "only ticks whose reasons were read";
    EXPECT_EQ(th.reason_active_us[static_cast<std::size_t>(ThrottleReason::sw_power_cap)],
              10 * k_us_per_second);
    EXPECT_EQ(th.reason_active_us[static_cast<std::size_t>(ThrottleReason::hw_thermal)],
              4 * k_us_per_second);
    EXPECT_EQ(th.clock_active_us, 40 * k_us_per_second);
    const ThrottleShares s = throttle_shares(th);
    EXPECT_DOUBLE_EQ(*s.reason[0], 1.0);
    EXPECT_DOUBLE_EQ(*s.thermal, 0.4);
    EXPECT_DOUBLE_EQ(*s.power, 1.0);
    EXPECT_EQ(s.reason[4], 0.0) << "read and never set: 0 %";
    // (990 × 10 + 1980 × 30) / (1980 × 40) = 0.875
    EXPECT_DOUBLE_EQ(*s.clock_ratio, 0.875);
    EXPECT_EQ(throttle_shares(ThrottleTotals{}).thermal, std::nullopt) << "n/a, never 0 %";
    EXPECT_EQ(throttle_shares(ThrottleTotals{}).clock_ratio, std::nullopt);
}

TEST(Health, MemoryPressureAndGhostMemory) {
    HealthTotals h;
    CardTick t = tick(0, k_t0, k_dur, {});
    t.readings.mem_used_mib = 72'000; // 90 % of 80000: pressure
    t.readings.mem_total_mib = 80'000;
    t.readings.ghost_mib = 2048;
    add_health(t, classify(t, Thresholds{}), h);
    CardTick u = tick(0, k_t0 + k_dur, k_dur, {});
    u.readings.mem_used_mib = 71'999;
    u.readings.mem_total_mib = 80'000;
    u.readings.ghost_mib = 100; // at the floor: noise
    add_health(u, classify(u, Thresholds{}), h);
    add_health(tick(0, k_t0 + 2 * k_dur, k_dur, {}), StateTimes{k_dur, 0, 0, 0}, h); // unread
    EXPECT_EQ(h.memory.known_us, 2 * k_dur);
    EXPECT_EQ(h.memory.pressure_us, k_dur);
    EXPECT_EQ(h.memory.ghost_known_us, 2 * k_dur);
    EXPECT_EQ(h.memory.ghost_mib_ms, 2048 * (k_dur / k_us_per_ms));
    EXPECT_EQ(h.memory.ghost_first_us, k_t0);
    EXPECT_EQ(h.memory.ghost_last_end_us, k_t0 + k_dur);
    // Sums of rollups keep the earliest start and the latest end.
    MemoryTotals later;
    later.ghost_first_us = k_t0 + k_us_per_hour;
    later.ghost_last_end_us = k_t0 + 2 * k_us_per_hour;
    h.memory += later;
    EXPECT_EQ(h.memory.ghost_first_us, k_t0);
    EXPECT_EQ(h.memory.ghost_last_end_us, k_t0 + 2 * k_us_per_hour);
}

TEST(Health, LoadShareBinsActiveTimeForAnyLightThreshold) {
    EXPECT_EQ(load_share(tick(0, k_t0, k_dur, {})), std::nullopt) << "no power: n/a";
    CardTick t = tick(0, k_t0, 20 * k_us_per_second, {proc(1, 4000, 50)});
    t.readings.power_mw = 140'000;
    EXPECT_EQ(load_share(t), std::nullopt) << "no limit: n/a";
    t.readings.power_limit_mw = 700'000; // 20 %
    EXPECT_DOUBLE_EQ(*load_share(t), 0.2);
    EXPECT_EQ(load_bin(0.2), 4U);
    EXPECT_EQ(load_bin(0.1999), 3U);
    EXPECT_EQ(load_bin(-1), 0U);
    EXPECT_EQ(load_bin(1.3), 19U) << "above the limit: the top bin";
    WindowAccumulator acc(Thresholds{}, 0, any_cell);
    acc.add(t);
    CardTick heavy = tick(0, k_t0 + k_dur, k_dur, {proc(1, 4000, 50)});
    heavy.readings.power_mw = 630'000; // 90 %
    heavy.readings.power_limit_mw = 700'000;
    acc.add(heavy);
    const LoadBins& bins = acc.gpus()[0].health.load;
    EXPECT_EQ(bins[4], 20 * k_us_per_second) << "only the active time of the tick";
    EXPECT_EQ(bins[18], k_dur);
    EXPECT_EQ(light_us(bins, 30), 20 * k_us_per_second);
    EXPECT_EQ(light_us(bins, 20), 0) << "20 % is not below 20 %";
    EXPECT_EQ(light_us(bins, 95), 50 * k_us_per_second);
    EXPECT_EQ(acc.identities()[1].health.load, bins) << "one identity: all of it";
}

TEST(Health, EnergyCostIsRoundedOnce) {
    // 10 kWh at 0.155 per kWh: 1.55 → 155 cents.
    EXPECT_EQ(energy_cost_cents(36'000'000'000, 155'000), 155);
    // 1 kWh at 0.125: 12.5 cents → 13 (half up).
    EXPECT_EQ(energy_cost_cents(3'600'000'000, 125'000), 13);
    EXPECT_EQ(energy_cost_cents(0, 125'000), 0);
    EXPECT_EQ(energy_cost_cents(3'600'000'000, 0), 0);
}

} // namespace health_test
} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Health readings recorded end to end: the real `gua daemon` on the fake driver with a simulated
// clock; every per-card health field read back through the card_tick view and through the block
// decoder equals what the scenario says (integrated here, from the scenario alone), and a field
// the driver does not support stays NULL / absent ("n/a"), never 0.
#include "e2e/daemon_e2e.hpp"
#include "e2e/record_harness.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"
#include "support/ground_truth.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace gua::e2e {
namespace health_record_test { // named after the file: unique in a unity batch

constexpr double k_start_s = 600;   // scenario time of the daemon's first poll
constexpr double k_interval_s = 30; // one tick
constexpr int k_ticks = 20;
// Readings change 1 ms after a poll (polls are at most 5 s apart and a 30 s tick ends on one),
// so which value a poll read is never a matter of rounding.
constexpr double k_after = 0.001;
constexpr const char* k_healthy = "GPU-11111111-0000-0000-0000-000000000000";

/// The integral of a piecewise-constant scenario series over [a, b).
double integral(const test::Series& s, double a, double b) {
    return s.integral(a, b);
}

/// Seconds of [a, b) during which the bit set of `reasons` has `bit`.
double seconds_with(const test::Series& reasons, std::uint64_t bit, double a, double b) {
    std::vector<double> cuts{a};
    reasons.breaks(a, b, cuts);
    cuts.push_back(b);
    std::sort(cuts.begin(), cuts.end());
    double total = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const auto bits = static_cast<std::uint64_t>(std::llround(reasons.at(cuts[i])));
        total += (bits & bit) != 0 ? cuts[i + 1] - cuts[i] : 0.0;
    }
    return total;
}

/// The device whose every health reading is supported and changes during the run.
json healthy_device() {
    const auto at = [](double t) { return t + k_after; };
    return {{"uuid", k_healthy},
            {"util", {{0, 80}}},
            {"memory_reserved_mib", 500},
            {"power_mw", {{0, 300000}, {at(690), 150000}, {at(780), 420000}, {at(1000), 250000}}},
            {"energy_start_mj", 123456789},
            {"power_limit_mw", {{0, 400000}, {at(840), 350000}}},
            {"max_sm_clock_mhz", {{0, 1980}}},
            {"sm_clock_mhz", {{0, 1980}, {at(660), 1410}}},
            {"temperature_c", {{0, 55}, {at(700), 71}}},
            {"memory_temperature_c", {{0, 61}, {at(750), 66}}},
            {"ecc_uncorrected", {{0, 0}, {at(720), 2}}},
            {"remapped_rows_correctable", {{0, 3}, {at(905), 4}}},
            {"remapped_rows_uncorrectable", {{0, 1}}},
            {"remap_pending", {{0, 0}, {at(780), 1}}},
            {"extra_used_mib", {{0, 0}, {at(900), 2048}}},
            // idle; power cap (inside a tick too); power cap + hardware thermal; each other reason
            // alone; none.
            {"clock_event_reasons",
             {{0, 0x1},
              {at(660), 0x4},
              {at(675), 0x44},
              {at(810), 0x40},
              {at(870), 0x8},
              {at(935), 0x10},
              {at(990), 0x20},
              {at(1050), 0x80},
              {at(1110), 0x0}}}};
}

/// A device whose driver supports none of the health readings (memory and power still read).
json unsupported_device() {
    json d = {{"uuid", "GPU-22222222-0000-0000-0000-000000000000"},
              {"util", {{0, 80}}},
              {"memory_reserved_mib", 500},
              {"power_mw", {{0, 200000}}}};
    d["not_supported"] = {"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetTotalEnergyConsumption",
                          "nvmlDeviceGetMaxClockInfo", "nvmlDeviceGetCurrentClocksEventReasons",
                          "nvmlDeviceGetCurrentClocksThrottleReasons"};
    d["unsupported_fields"] = {82, 4, 142, 143, 144};
    return d;
}

using Recorded = RecordedTick;

class HealthRecord : public RecordingTest {
  protected:
    std::vector<Recorded> record(const json& scenario, FakeVariant variant) {
        return RecordingTest::record(scenario, variant, k_start_s, k_interval_s, k_ticks);
    }
};

/// The field table's row for `id` (nullptr when there is none).
const telemetry::CardFieldInfo* field(std::string_view id) {
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.id == id) {
            return &f;
        }
    }
    return nullptr;
}

/// The stored value of field `id`, as the view shows it and as the decoder gives it, is
/// `expected`.
void expect_field(const Recorded& c, std::string_view id, std::optional<std::int64_t> expected) {
    const telemetry::CardFieldInfo* f = field(id);
    ASSERT_NE(f, nullptr) << id;
    const std::string shown = c.view.at(std::string(id));
    if (!expected) {
        EXPECT_EQ(shown, "NULL") << id << ": n/a, never 0";
        EXPECT_EQ(c.decoded.*f->value, std::nullopt) << id << ": n/a, never 0";
        return;
    }
    EXPECT_EQ(shown, std::to_string(*expected)) << id;
    EXPECT_EQ(c.decoded.*f->value, expected) << id;
}

std::optional<std::int64_t> whole(double v) {
    return std::llround(v);
}

TEST_F(HealthRecord, EveryFieldIsStoredAsTheScenarioSaysAndUnsupportedIsNull) {
    const json process = holder(0, 8000, 80, 4242);
    json scenario = {{"devices", {healthy_device(), unsupported_device()}},
                     {"processes", {process, holder(1, 3000, 80, 4343)}}};
    const std::vector<Recorded> ticks = record(scenario, FakeVariant::modern);
    ASSERT_EQ(ticks.size(), 2U * k_ticks);
    const json& d = scenario["devices"][0];
    const test::Series power(d["power_mw"]);
    const test::Series reasons(d["clock_event_reasons"]);
    const auto series = [&](const char* name) { return test::Series(d[name]); };
    double energy_j = 0;
    double truth_j = 0;
    std::map<std::uint64_t, double> reason_s;
    for (const Recorded& c : ticks) {
        SCOPED_TRACE(fmt::format("{} [{:.3f}, {:.3f})", c.uuid, c.from_s, c.to_s));
        const bool healthy = c.uuid == k_healthy;
        // The tick's last poll is at its end: "last" fields hold the value there.
        const double end = c.to_s;
        if (!healthy) {
            for (std::string_view id :
                 {"power_limit_mw", "energy_mj", "max_sm_clock_mhz", "mem_temperature_c",
                  "ecc_uncorrected", "remapped_rows_cor", "remapped_rows_unc", "remap_pending",
                  "clock_events", "clocks_idle_us", "clocks_sw_power_cap_us",
                  "clocks_hw_slowdown_us", "clocks_sync_boost_us", "clocks_sw_thermal_us",
                  "clocks_hw_thermal_us", "clocks_hw_power_brake_us"}) {
                expect_field(c, id, std::nullopt);
            }
            expect_field(c, "power_mw", 200000);
            expect_field(c, "mem_total_mib", 81559);
            expect_field(c, "mem_reserved_mib", 500);
            expect_field(c, "ghost_mib", 0);
            continue;
        }
        expect_field(c, "power_mw", whole(power.at(end)));
        expect_field(c, "power_limit_mw", whole(series("power_limit_mw").at(end)));
        expect_field(c, "max_sm_clock_mhz", 1980);
        expect_field(c, "sm_clock_mhz", whole(series("sm_clock_mhz").at(end)));
        expect_field(c, "temperature_c", whole(series("temperature_c").at(end)));
        expect_field(c, "mem_temperature_c", whole(series("memory_temperature_c").at(end)));
        expect_field(c, "mem_total_mib", 81559);
        expect_field(c, "mem_reserved_mib", 500);
        expect_field(c, "ghost_mib", whole(series("extra_used_mib").at(end)));
        expect_field(c, "ecc_uncorrected", whole(series("ecc_uncorrected").at(end)));
        expect_field(c, "remapped_rows_cor", whole(series("remapped_rows_correctable").at(end)));
        expect_field(c, "remapped_rows_unc", whole(series("remapped_rows_uncorrectable").at(end)));
        expect_field(c, "remap_pending", whole(series("remap_pending").at(end)));
        // Energy per tick from the counter: within 1 % of the integral of the scenario's power.
        const double truth = integral(power, c.from_s, c.to_s) / 1e3; // mW·s → J
        ASSERT_TRUE(c.decoded.energy_mj.has_value());
        const double stored = static_cast<double>(*c.decoded.energy_mj) / 1e3;
        EXPECT_NEAR(stored, truth, 0.01 * truth) << "energy (J)";
        EXPECT_EQ(c.view.at("energy_mj"), std::to_string(*c.decoded.energy_mj));
        energy_j += stored;
        truth_j += truth;
        // Clock-event time per reason: the scenario's, to the 1 ms each change lies after a poll.
        std::uint64_t any = 0;
        for (const auto& [id, bit] : std::vector<std::pair<std::string, std::uint64_t>>{
                 {"clocks_idle_us", 0x1},
                 {"clocks_sw_power_cap_us", 0x4},
                 {"clocks_hw_slowdown_us", 0x8},
                 {"clocks_sync_boost_us", 0x10},
                 {"clocks_sw_thermal_us", 0x20},
                 {"clocks_hw_thermal_us", 0x40},
                 {"clocks_hw_power_brake_us", 0x80}}) {
            const double truth_s = seconds_with(reasons, bit, c.from_s, c.to_s);
            const telemetry::CardFieldInfo* f = field(id);
            ASSERT_NE(f, nullptr) << id;
            const std::optional<std::int64_t> us = c.decoded.*f->value;
            ASSERT_TRUE(us.has_value()) << id;
            EXPECT_NEAR(static_cast<double>(*us) / 1e6, truth_s, 0.002) << id;
            EXPECT_EQ(c.view.at(id), std::to_string(*us)) << id;
            reason_s[bit] += static_cast<double>(*us) / 1e6;
            if (truth_s > 0.5) { // read by a poll (not just the 1 ms before one)
                any |= bit;
            }
        }
        EXPECT_EQ(c.decoded.clock_events.value_or(-1) & 0xFF, static_cast<std::int64_t>(any));
    }
    EXPECT_NEAR(energy_j, truth_j, 0.01 * truth_j);
    EXPECT_GT(truth_j, 0);
    // Every reason the scenario has occurs in the run (the test covers each stream).
    for (std::uint64_t bit : {0x1, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80}) {
        EXPECT_NEAR(reason_s[bit], seconds_with(reasons, bit, k_start_s, k_start_s + 600), 0.05)
            << bit;
        EXPECT_GT(reason_s[bit], 0) << bit;
    }
}

// A driver before R450 (MemoryInfo v1, no energy counter, no field values): the reservation, the
// ghost memory, the energy and the field values are n/a; the limit and clocks are still read.
TEST_F(HealthRecord, ALegacyDriverRecordsWhatItHasAndNullForTheRest) {
    const json scenario = {{"devices", {healthy_device()}},
                           {"processes", {holder(0, 8000, 80, 4242)}}};
    const std::vector<Recorded> ticks = record(scenario, FakeVariant::v1);
    ASSERT_EQ(ticks.size(), static_cast<std::size_t>(k_ticks));
    const json& d = scenario["devices"][0];
    for (const Recorded& c : ticks) {
        SCOPED_TRACE(fmt::format("[{:.3f}, {:.3f})", c.from_s, c.to_s));
        for (std::string_view id :
             {"energy_mj", "mem_reserved_mib", "ghost_mib", "mem_temperature_c", "ecc_uncorrected",
              "remapped_rows_cor", "remapped_rows_unc", "remap_pending"}) {
            expect_field(c, id, std::nullopt);
        }
        expect_field(c, "power_limit_mw", whole(test::Series(d["power_limit_mw"]).at(c.to_s)));
        expect_field(c, "max_sm_clock_mhz", 1980);
        expect_field(c, "mem_total_mib", 81559);
    }
}

} // namespace health_record_test
} // namespace gua::e2e

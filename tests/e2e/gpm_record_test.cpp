// SPDX-License-Identifier: Apache-2.0
// GPM metrics recorded end to end: the real `gua daemon` on the fake driver with a simulated
// clock; each GPM field of each card-tick (whole GPUs and MIG instances) equals the mean of the
// scenario's series over the tick, integrated here from the scenario alone (within 1 pp); a
// metric, a device or a driver without GPM records NULL ("n/a"), never 0, and the daemon runs on.
#include "e2e/daemon_e2e.hpp"
#include "e2e/record_harness.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"
#include "support/ground_truth.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::e2e {
namespace gpm_record_test { // named after the file: unique in a unity batch

constexpr double k_start_s = 600;   // scenario time of the daemon's first poll
constexpr double k_interval_s = 30; // one tick
constexpr int k_ticks = 12;
constexpr const char* k_gpu = "GPU-33333333-0000-0000-0000-000000000000";
constexpr const char* k_partial = "GPU-44444444-0000-0000-0000-000000000000";
constexpr const char* k_old_card = "GPU-55555555-0000-0000-0000-000000000000";
constexpr const char* k_mig_a = "MIG-66666666-0000-0000-0000-000000000001";
constexpr const char* k_mig_b = "MIG-66666666-0000-0000-0000-000000000002";

/// The GPM fields and the metric id each records.
const std::vector<std::pair<std::string, int>> k_fields{
    {"sm_active_cpct", 2},   {"sm_occupancy_cpct", 3}, {"tensor_active_cpct", 5},
    {"dram_bw_cpct", 10},    {"fp64_active_cpct", 11}, {"fp32_active_cpct", 12},
    {"fp16_active_cpct", 13}};

/// The mean of a piecewise-constant scenario series over [a, b).
double mean(const test::Series& s, double a, double b) {
    return s.integral(a, b) / (b - a);
}

/// Series that change inside ticks and between polls (polls are ≤ 5 s apart on a grid from
/// 600 s), so that a tick's value is a true time-weighted mean of several levels.
json metric_series(double scale) {
    json m = json::object();
    for (const auto& [id, metric] : k_fields) {
        const double base = scale * (5 + 6 * metric);
        m[std::to_string(metric)] = {
            {0, base},  {612.3, std::min(100.0, base * 1.7)}, {641.9, base * 0.2},
            {677.7, 0}, {700.1, std::min(100.0, base + 30)},  {743.4, base * 0.5}};
    }
    return m;
}

json gpm_device(const char* uuid, double scale) {
    return {{"uuid", uuid},
            {"util", {{0, 80}}},
            {"gpm", {{"supported", true}, {"metrics", metric_series(scale)}}}};
}

using Recorded = RecordedTick;

class GpmRecord : public RecordingTest {
  protected:
    std::vector<Recorded> record(const json& scenario, FakeVariant variant) {
        return RecordingTest::record(scenario, variant, k_start_s, k_interval_s, k_ticks);
    }
};

const telemetry::CardFieldInfo& field(std::string_view id) {
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.id == id) {
            return f;
        }
    }
    throw std::logic_error("no field " + std::string(id));
}

/// Field `id` of `c` is NULL in the view and absent in the decoder.
void expect_na(const Recorded& c, const std::string& id) {
    EXPECT_EQ(c.view.at(id), "NULL") << id << ": n/a, never 0";
    EXPECT_EQ(c.decoded.*field(id).value, std::nullopt) << id << ": n/a, never 0";
}

/// Field `id` of `c` (hundredths of a percent) is the scenario's mean of `series` over the tick,
/// within 1 pp, the same in the view and the decoder.
void expect_mean(const Recorded& c, const std::string& id, const json& series) {
    const std::optional<std::int64_t> v = c.decoded.*field(id).value;
    ASSERT_TRUE(v.has_value()) << id;
    EXPECT_EQ(c.view.at(id), std::to_string(*v)) << id;
    const double truth = mean(test::Series(series), c.from_s, c.to_s);
    EXPECT_NEAR(static_cast<double>(*v) / 100.0, truth, 1.0) << id;
}

TEST_F(GpmRecord, EachMetricIsTheTickMeanOfTheScenarioPerGpuAndPerMigInstance) {
    json partial = gpm_device(k_partial, 0.5);
    partial["gpm"]["metric_max"] = 98; // a driver built with an R525-era header
    partial["gpm"]["not_supported_metrics"] = {13, 5};
    json mig = {{"uuid", "GPU-66666666-0000-0000-0000-000000000000"},
                {"mig", true},
                {"gpm", {{"supported", true}, {"metric_max", 210}}},
                {"mig_instances",
                 {{{"uuid", k_mig_a},
                   {"name", "MIG 3g.40gb"},
                   {"gpu_instance_id", 1},
                   {"gpm_metrics", metric_series(0.8)}},
                  {{"uuid", k_mig_b},
                   {"name", "MIG 3g.40gb"},
                   {"gpu_instance_id", 2},
                   {"gpm_metrics", metric_series(0.3)}}}}};
    json old_card = {{"uuid", k_old_card}, {"util", {{0, 80}}}}; // pre-Hopper: no GPM
    const json scenario = {{"devices", {gpm_device(k_gpu, 1.0), partial, old_card, mig}},
                           {"processes", {holder(0, 8000, 80, 4242)}}};
    const std::vector<Recorded> ticks = record(scenario, FakeVariant::modern);
    ASSERT_EQ(ticks.size(), 5U * k_ticks);
    std::map<std::string, int> seen;
    for (const Recorded& c : ticks) {
        SCOPED_TRACE(fmt::format("{} [{:.3f}, {:.3f})", c.uuid, c.from_s, c.to_s));
        ++seen[c.uuid];
        const json* metrics = nullptr;
        if (c.uuid == k_gpu || c.uuid == k_partial) {
            metrics = &scenario["devices"][c.uuid == k_gpu ? 0 : 1]["gpm"]["metrics"];
        } else if (c.uuid == k_mig_a || c.uuid == k_mig_b) {
            metrics =
                &scenario["devices"][3]["mig_instances"][c.uuid == k_mig_a ? 0 : 1]["gpm_metrics"];
        }
        for (const auto& [id, metric] : k_fields) {
            const bool unsupported = c.uuid == k_partial && (metric == 13 || metric == 5);
            if (metrics == nullptr || unsupported) {
                expect_na(c, id);
            } else {
                expect_mean(c, id, (*metrics)[std::to_string(metric)]);
            }
        }
    }
    for (const char* uuid : {k_gpu, k_partial, k_old_card, k_mig_a, k_mig_b}) {
        EXPECT_EQ(seen[uuid], k_ticks) << uuid;
    }
}

// The legacy variant has no nvmlGpm* symbol at all: every GPM field is n/a and every tick is
// recorded (the daemon neither stops nor counts it as a read error).
TEST_F(GpmRecord, ADriverWithoutGpmSymbolsRecordsNullAndKeepsRunning) {
    const json scenario = {{"devices", {gpm_device(k_gpu, 1.0)}},
                           {"processes", {holder(0, 8000, 80, 4242)}}};
    const std::vector<Recorded> ticks = record(scenario, FakeVariant::v1);
    ASSERT_EQ(ticks.size(), static_cast<std::size_t>(k_ticks));
    for (const Recorded& c : ticks) {
        SCOPED_TRACE(fmt::format("[{:.3f}, {:.3f})", c.from_s, c.to_s));
        for (const auto& [id, metric] : k_fields) {
            expect_na(c, id);
        }
        EXPECT_EQ(c.view.at("read_errors"), "0");
        EXPECT_NE(c.view.at("active_us"), "NULL"); // the rest of the card is recorded
    }
}

// A device that says it does not support GPM, and one whose sample call answers NOT_SUPPORTED
// although the support query said yes: n/a, never 0, no read errors.
TEST_F(GpmRecord, AnUnsupportedDeviceRecordsNull) {
    json refuses = gpm_device(k_partial, 1.0);
    refuses["not_supported"] = {"nvmlGpmSampleGet"};
    json no = gpm_device(k_gpu, 1.0);
    no["gpm"]["supported"] = false;
    const json scenario = {{"devices", {no, refuses}}, {"processes", {holder(0, 8000, 80, 4242)}}};
    const std::vector<Recorded> ticks = record(scenario, FakeVariant::modern);
    ASSERT_EQ(ticks.size(), 2U * k_ticks);
    for (const Recorded& c : ticks) {
        SCOPED_TRACE(fmt::format("{} [{:.3f}, {:.3f})", c.uuid, c.from_s, c.to_s));
        for (const auto& [id, metric] : k_fields) {
            expect_na(c, id);
        }
        EXPECT_EQ(c.view.at("read_errors"), "0");
    }
}

} // namespace gpm_record_test
} // namespace gua::e2e

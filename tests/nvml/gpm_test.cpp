// SPDX-License-Identifier: Apache-2.0
// GPM through NvmlSource on the fake driver: each poll's metrics are the scenario's means since
// the previous sample, a poll under 100 ms after it takes none, per-metric and per-device "not
// supported" stay n/a, a failed sample restarts the ring and counts as a read error.
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

namespace gua::nvml {
namespace {

using nlohmann::json;
using testing::FakeDriver;
using testing::wall_at;

json hopper(json extra = json::object()) {
    json d = {{"uuid", "GPU-0"},
              {"util", {{0, 50}}},
              {"gpm",
               {{"supported", true},
                {"metrics",
                 {{"2", {{0, 80}, {10, 20}}},
                  {"3", {{0, 30}}},
                  {"5", {{0, 0}, {4, 50}}},
                  {"10", {{0, 64.25}}},
                  {"12", {{0, 12.5}}},
                  {"13", {{0, 40}}}}}}}};
    d.update(extra);
    return d;
}

TEST(NvmlGpm, EachPollHasTheMeansSinceThePreviousSample) {
    FakeDriver fake(json{{"devices", {hopper()}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    const auto first = source->poll(wall_at(0));
    ASSERT_EQ(first.size(), 1U);
    EXPECT_FALSE(first[0].readings.sm_active_cpct.has_value()) << "one sample: no metrics yet";
    fake.set_time(5);
    const telemetry::CardReadings r = source->poll(wall_at(5)).at(0).readings;
    EXPECT_EQ(r.sm_active_cpct, 8000);
    EXPECT_EQ(r.sm_occupancy_cpct, 3000);
    EXPECT_EQ(r.tensor_active_cpct, 1000) << "0 % for 4 s, 50 % for 1 s";
    EXPECT_EQ(r.dram_bw_cpct, 6425);
    EXPECT_EQ(r.fp64_active_cpct, 0) << "no series: the card measured 0 %";
    EXPECT_EQ(r.fp32_active_cpct, 1250);
    EXPECT_EQ(r.fp16_active_cpct, 4000);
    fake.set_time(12.5);
    const telemetry::CardReadings later = source->poll(wall_at(12.5)).at(0).readings;
    EXPECT_EQ(later.sm_active_cpct, 6000) << "80 % for 5 s, 20 % for 2.5 s";
    EXPECT_EQ(later.tensor_active_cpct, 5000);
}

TEST(NvmlGpm, APollUnderAHundredMillisecondsTakesNoSample) {
    FakeDriver fake(json{{"devices", {hopper()}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(9.95);
    source->poll(wall_at(9.95));
    fake.set_time(10.03);
    const auto soon = source->poll(wall_at(10.03));
    EXPECT_FALSE(soon.at(0).readings.sm_active_cpct.has_value()) << "80 ms after: n/a";
    EXPECT_EQ(soon.at(0).read_errors, 0);
    fake.set_time(10.45);
    const auto next = source->poll(wall_at(10.45));
    // From the sample at 9.95: 80 % for 0.05 s, 20 % for 0.45 s.
    EXPECT_EQ(next.at(0).readings.sm_active_cpct, 2600);
}

TEST(NvmlGpm, MetricsAndDevicesWithoutSupportAreNotMeasured) {
    json partial = hopper({{"uuid", "GPU-1"}});
    partial["gpm"]["not_supported_metrics"] = {2, 13};
    partial["gpm"]["metric_max"] = 98;
    json pre_hopper = hopper({{"uuid", "GPU-2"}});
    pre_hopper["gpm"]["supported"] = false;
    FakeDriver fake(json{{"devices", {partial, pre_hopper}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto polls = source->poll(wall_at(5));
    ASSERT_EQ(polls.size(), 2U);
    EXPECT_FALSE(polls[0].readings.sm_active_cpct.has_value());
    EXPECT_FALSE(polls[0].readings.fp16_active_cpct.has_value());
    EXPECT_EQ(polls[0].readings.sm_occupancy_cpct, 3000) << "the other metrics are measured";
    EXPECT_EQ(polls[0].read_errors, 0);
    for (const auto& field : telemetry::k_card_fields) {
        if (field.fold == telemetry::Fold::mean) {
            EXPECT_FALSE((polls[1].readings.*field.value).has_value()) << field.id;
        }
    }
    EXPECT_EQ(polls[1].read_errors, 0);
}

TEST(NvmlGpm, AFailedSampleRestartsTheRingAndCountsAnError) {
    json d = hopper();
    FakeDriver fake(
        {{"devices", {d}},
         {"faults", {{{"function", "nvmlGpmSampleGet"}, {"from", 4}, {"to", 6}, {"error", 999}}}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto failed = source->poll(wall_at(5));
    EXPECT_FALSE(failed.at(0).readings.sm_active_cpct.has_value());
    EXPECT_EQ(failed.at(0).read_errors, 1);
    fake.set_time(8);
    const auto first_after = source->poll(wall_at(8));
    EXPECT_FALSE(first_after.at(0).readings.sm_active_cpct.has_value()) << "a new pair starts";
    fake.set_time(12);
    EXPECT_EQ(source->poll(wall_at(12)).at(0).readings.sm_active_cpct, 5000)
        << "80 % for 2 s, 20 % for 2 s";
}

TEST(NvmlGpm, MigInstancesAreSampledThroughTheirParent) {
    json d = hopper();
    d["mig"] = true;
    d["mig_instances"] = {
        {{"uuid", "MIG-a"}, {"gpu_instance_id", 3}, {"gpm_metrics", {{"2", {{0, 10}}}}}},
        {{"uuid", "MIG-b"}, {"gpu_instance_id", 5}, {"gpm_metrics", {{"2", {{0, 70}}}}}}};
    d["not_supported"] = {"nvmlGpmSampleGet"}; // only the per-instance call answers
    FakeDriver fake(json{{"devices", {d}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto polls = source->poll(wall_at(5));
    ASSERT_EQ(polls.size(), 2U);
    EXPECT_EQ(polls[0].uuid, "MIG-a");
    EXPECT_EQ(polls[0].readings.sm_active_cpct, 1000);
    EXPECT_EQ(polls[1].readings.sm_active_cpct, 7000);
    EXPECT_EQ(polls[1].readings.sm_occupancy_cpct, 0) << "the instance's own series: none";
}

} // namespace
} // namespace gua::nvml

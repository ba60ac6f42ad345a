// SPDX-License-Identifier: Apache-2.0
// Utilization integrated from the fake driver's sample rings against the scenario's ground truth:
// bursty load, dry idle rings, junk and quirky replies, per-process shares, real time.
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace gua::nvml {
namespace {

using nlohmann::json;
using telemetry::UtilSource;
using testing::FakeDriver;
using testing::poll_mean;
using testing::Variant;
using testing::wall_at;

/// util 100 % for `on_s`, then 0 % until `cycle_s`, repeated until `until_s`.
json bursts(double on_s, double cycle_s, double until_s) {
    json points = json::array();
    for (double t = 0; t < until_s; t += cycle_s) {
        points.push_back({t, 100});
        points.push_back({t + on_s, 0});
    }
    return points;
}

/// Mean utilization over polls at `times` (s), each poll weighted by its span like the sampler.
double integrated_share(NvmlSource& source, const FakeDriver& fake,
                        const std::vector<double>& times) {
    double sum = 0;
    double span = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
        fake.set_time(times[i]);
        const auto poll = source.poll(wall_at(times[i])).at(0);
        if (i > 0) {
            EXPECT_EQ(poll.util_source, UtilSource::samples);
            sum += poll_mean(poll) * (times[i] - times[i - 1]);
            span += times[i] - times[i - 1];
        }
    }
    return sum / span;
}

TEST(NvmlUtilIntegration, BurstyLoadMatchesGroundTruthWhereSnapshotsMissIt) {
    // 0.5 s of 100 % every 2 s: a 25 % duty cycle that a 5-second snapshot never sees.
    const json scenario = {{"devices", {{{"uuid", "GPU-0"}, {"util", bursts(0.5, 2, 120)}}}}};
    std::vector<double> aligned;
    for (double t = 0; t <= 60; t += 5) {
        aligned.push_back(t);
    }
    FakeDriver fake(scenario);
    {
        auto source = fake.source();
        ASSERT_TRUE(source);
        EXPECT_NEAR(integrated_share(*source, fake, aligned), 25.0, 2.0);
    }
    {
        auto legacy = fake.source(Variant::legacy); // snapshot only
        ASSERT_TRUE(legacy);
        double snapshot_sum = 0;
        legacy->poll(wall_at(0));
        for (std::size_t i = 1; i < aligned.size(); ++i) {
            fake.set_time(aligned[i]);
            snapshot_sum += poll_mean(legacy->poll(wall_at(aligned[i])).at(0));
        }
        EXPECT_EQ(snapshot_sum, 0.0); // every 5 s reading lands in an idle stretch
    }
    {
        auto source = fake.source();
        ASSERT_TRUE(source);
        const std::vector<double> ragged = {0, 3.7, 8.1, 13.3, 16.9, 22.4, 27.0, 33.3, 38.5, 44.1};
        // Ground truth over (0, 44.1]: 22 bursts of 0.5 s plus 0.1 s of the 23rd.
        EXPECT_NEAR(integrated_share(*source, fake, ragged), 100.0 * 11.1 / 44.1, 2.0);
    }
}

TEST(NvmlUtilIntegration, BootRelativeTimestampsAreTreatedAsOpaque) {
    const json device = {
        {"uuid", "GPU-0"}, {"timestamp_domain", "boot"}, {"util", bursts(0.5, 2, 120)}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    EXPECT_NEAR(integrated_share(*source, fake, {0, 5, 10, 15, 20, 25, 30}), 25.0, 2.0);
}

TEST(NvmlUtilIntegration, ARingPolledTooSlowlyIsReportedAndNotDilutedWithIdle) {
    const json device = {{"uuid", "GPU-0"}, {"util", {{0, 70}}}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    fake.set_time(20); // the ring is full at startup
    source->poll(wall_at(20));
    fake.set_time(50); // 30 s later: the 100-entry ring only covers the last 16.7 s
    const auto poll = source->poll(wall_at(50)).at(0);
    EXPECT_EQ(poll.util_source, UtilSource::partial);
    EXPECT_EQ(poll.util.size(), 100u);
    EXPECT_NEAR(poll_mean(poll), 70.0, 1e-9);
    // What the ring no longer holds is unmeasured: 30 s less 100 periods of 1/6 s.
    EXPECT_NEAR(static_cast<double>(poll.unmeasured_us) / 1e6, 30.0 - 100.0 / 6.0, 1.0 / 6.0);
    EXPECT_EQ(source->diagnostics().lost_sample_batches, 1);
}

TEST(NvmlUtilIntegration, DryRingMeansIdleNotMissing) {
    // The ring keeps the entries of an earlier burst (dry rings keep old entries visible), so
    // the daemon starts with a cursor.
    const json device = {{"uuid", "GPU-0"},
                         {"util_idle_mode", "dry"},
                         {"util", {{0, 100}, {0.5, 0}, {10, 100}, {12, 0}}}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    fake.set_time(1);
    source->poll(wall_at(1));
    std::vector<double> means;
    for (const double t : {5.0, 10.0, 15.0, 20.0}) {
        fake.set_time(t);
        const auto poll = source->poll(wall_at(t)).at(0);
        EXPECT_EQ(poll.util_source, UtilSource::samples) << t;
        means.push_back(poll_mean(poll));
    }
    EXPECT_EQ(means[0], 0.0);
    EXPECT_EQ(means[1], 0.0);
    EXPECT_NEAR(means[2], 40.0, 0.5); // 2 s of 100 % in a 5 s poll
    EXPECT_EQ(means[3], 0.0);
}

TEST(NvmlUtilIntegration, JunkAndQuirkyRepliesDoNotBendTheResult) {
    const json device = {{"uuid", "GPU-0"},
                         {"util", {{0, 60}, {5, 250}, {5.0 + 1.0 / 6.0, 60}}},
                         {"quirks",
                          {{"include_last_seen", true},
                           {"unsorted", true},
                           {"zero_timestamp_entry", true},
                           {"dirty_upper_bytes", true}}}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    for (const double t : {5.0, 10.0}) {
        fake.set_time(t);
        const auto poll = source->poll(wall_at(t)).at(0);
        EXPECT_NEAR(poll_mean(poll), 60.0, 1e-9) << t;
    }
    EXPECT_EQ(source->diagnostics().junk_util_samples, 1);
}

TEST(NvmlUtilIntegration, PerProcessSharesFollowTheirWorkload) {
    const json scenario = {
        {"devices",
         {{{"uuid", "GPU-0"},
           {"util", {{0, 70}}},
           {"process_util_junk", true},
           {"process_util_size", 4096}}}},
        {"processes",
         {{{"device", 0},
           {"pid", 4242},
           {"memory_mib", {{0, 8000}}},
           {"sm_util", bursts(0.5, 1, 60)}},
          {{"device", 0}, {"pid", 4243}, {"memory_mib", {{0, 1000}}}, {"sm_util", {{0, 20}}}},
          {{"device", 0}, {"pid", 4244}, {"memory_mib", {{0, 3000}}}, {"start", 0}, {"end", 8}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    for (const double t : {5.0, 10.0}) {
        fake.set_time(t);
        const auto poll = source->poll(wall_at(t)).at(0);
        ASSERT_GE(poll.processes.size(), 2u);
        EXPECT_NEAR(*poll.processes[0].sm_util_pct, 50.0, 2.0) << t;
        EXPECT_EQ(poll.processes[1].sm_util_pct, 20.0) << t;
        if (t < 8) {
            EXPECT_EQ(poll.processes[2].sm_util_pct, 0.0); // alive, never busy: absent = 0 %
        } else {
            EXPECT_EQ(poll.processes.size(), 2u);
        }
    }
    EXPECT_GT(source->diagnostics().junk_process_samples, 0);     // the entry over 100 %
    EXPECT_GT(source->diagnostics().unlisted_process_samples, 0); // pid 999999, on no list
}

// Driver 580.159.04 (H200) answers the size query with its table size, 72, and refuses any
// smaller buffer with INSUFFICIENT_SIZE even when one entry would fit (docs/real-driver.md).
TEST(NvmlUtilIntegration, ProcessSamplesWithTheDriversBufferFloor) {
    const json scenario = {
        {"devices", {{{"uuid", "GPU-0"}, {"util", {{0, 60}}}, {"process_util_size", 72}}}},
        {"processes",
         {{{"device", 0}, {"pid", 4242}, {"memory_mib", {{0, 8000}}}, {"sm_util", {{0, 60}}}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    for (const double t : {5.0, 10.0, 15.0}) {
        fake.set_time(t);
        const auto poll = source->poll(wall_at(t)).at(0);
        ASSERT_EQ(poll.processes.size(), 1u) << t;
        ASSERT_TRUE(poll.processes[0].sm_util_pct.has_value()) << t;
        EXPECT_EQ(*poll.processes[0].sm_util_pct, 60.0) << t;
    }
}

TEST(NvmlUtilIntegration, IntegratesInScaledRealTime) {
    // time_scale 40: 0.6 s of wall time is 24 s of a 25 % duty cycle (0.25 s on per second).
    const json scenario = {{"time_scale", 40.0},
                           {"devices", {{{"uuid", "GPU-0"}, {"util", bursts(0.25, 1, 1000)}}}}};
    FakeDriver fake(scenario, false);
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(gua::wall_now());
    double sum = 0;
    double weight = 0;
    for (int i = 0; i < 12; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto poll = source->poll(gua::wall_now()).at(0);
        ASSERT_EQ(poll.util_source, UtilSource::samples);
        for (const auto& s : poll.util) {
            sum += s.pct * static_cast<double>(s.weight_us);
            weight += static_cast<double>(s.weight_us);
        }
    }
    EXPECT_GT(weight, 15.0 * 1e6); // the samples cover scenario time, not wall time
    EXPECT_NEAR(sum / weight, 25.0, 2.0);
}

} // namespace
} // namespace gua::nvml

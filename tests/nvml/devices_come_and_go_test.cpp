// SPDX-License-Identifier: Apache-2.0
// NvmlSource on the fake driver as cards come and go: a card lost when the source starts, one
// known from earlier runs, one hot-added, one that leaves its index to another card; what
// unopened_devices() says, and which polls are left unmeasured.
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace gua::nvml::devices_come_and_go_test {
namespace {

using nlohmann::json;
using testing::FakeDriver;
using testing::wall_at;

constexpr double k_back_s = 40; // GPU 1 answers GPU_IS_LOST to every call before this

json two_cards(double lost_until_s) {
    return {
        {"devices",
         {{{"uuid", "GPU-0"}, {"util", {{0, 60}}}}, {{"uuid", "GPU-1"}, {"util", {{0, 30}}}}}},
        {"faults",
         {{{"function", "*"}, {"device", 1}, {"from", 0}, {"to", lost_until_s}, {"error", 15}}}}};
}

const telemetry::DevicePoll* poll_of(const std::vector<telemetry::DevicePoll>& polls,
                                     const std::string& uuid) {
    const auto it = std::find_if(polls.begin(), polls.end(),
                                 [&](const telemetry::DevicePoll& p) { return p.uuid == uuid; });
    return it != polls.end() ? &*it : nullptr;
}

TEST(NvmlDevicesComeAndGo, CardLostAtStartIsNamedAndReadFromThePollAtWhichItOpens) {
    FakeDriver fake(two_cards(k_back_s));
    auto source = fake.source();
    ASSERT_TRUE(source);
    std::vector<std::string> log;
    source->set_notice_sink([&log](const std::string& line) { log.push_back(line); });
    ASSERT_EQ(source->devices().size(), 1u);
    const std::vector<telemetry::UnopenedDevice> unopened = source->unopened_devices();
    ASSERT_EQ(unopened.size(), 1u);
    EXPECT_EQ(unopened[0].index, 1);
    EXPECT_EQ(unopened[0].error, "nvmlDeviceGetHandleByIndex: GPU is lost (error 15)");

    const double step = 5;
    double previous = 0;
    for (double t = 0; t <= k_back_s + 2 * step; t += step) {
        fake.set_time(t);
        const auto polls = source->poll(wall_at(t));
        const telemetry::DevicePoll* gpu1 = poll_of(polls, "GPU-1");
        if (t < k_back_s) {
            EXPECT_EQ(gpu1, nullptr) << t << ": never seen, so nothing to list yet";
        } else {
            ASSERT_NE(gpu1, nullptr) << t;
            EXPECT_FALSE(gpu1->lost);
            if (t == k_back_s) {
                // Its first poll: the span since the previous poll was not watched.
                EXPECT_EQ(gpu1->unmeasured_us, std::llround((t - previous) * 1e6)) << t;
                EXPECT_EQ(gpu1->util_source, telemetry::UtilSource::partial);
            } else {
                EXPECT_EQ(gpu1->unmeasured_us, 0) << t;
                EXPECT_NEAR(testing::poll_mean(*gpu1), 30.0, 0.5) << t;
            }
        }
        previous = t;
    }
    EXPECT_EQ(source->devices().size(), 2u);
    EXPECT_TRUE(source->unopened_devices().empty());
    ASSERT_GE(log.size(), 3u);
    EXPECT_EQ(log[0], "NVML could not open GPU 1: nvmlDeviceGetHandleByIndex: GPU is lost (error "
                      "15); trying it again at every poll");
    EXPECT_NE(
        std::find(log.begin(), log.end(), "NVML: GPU 1 (GPU-1) appeared; recording it from now on"),
        log.end());
    EXPECT_NE(std::find(log.begin(), log.end(), "NVML opens GPU 1 again"), log.end());
}

TEST(NvmlDevicesComeAndGo, CardKnownFromAnEarlierRunIsLostUntilItOpens) {
    FakeDriver fake(two_cards(k_back_s));
    auto source = fake.source();
    ASSERT_TRUE(source);
    telemetry::DeviceInfo known;
    known.uuid = "GPU-1";
    known.index = 1;
    known.name = "NVIDIA H100 80GB HBM3";
    telemetry::DeviceInfo older = known; // registered earlier at the same index: not the one
    older.uuid = "GPU-old";
    telemetry::DeviceInfo elsewhere = known; // at another index: no business here
    elsewhere.uuid = "GPU-7";
    elsewhere.index = 7;
    source->expect_devices({older, known, elsewhere});
    const auto devices = source->devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[1].uuid, "GPU-1");

    const double step = 5;
    for (double t = 0; t <= k_back_s + step; t += step) {
        fake.set_time(t);
        const auto polls = source->poll(wall_at(t));
        ASSERT_EQ(polls.size(), 2u) << t;
        const telemetry::DevicePoll* gpu1 = poll_of(polls, "GPU-1");
        ASSERT_NE(gpu1, nullptr) << t;
        EXPECT_EQ(gpu1->lost, t < k_back_s) << t;
        if (t == k_back_s) {
            EXPECT_EQ(gpu1->unmeasured_us, std::llround(step * 1e6)) << "the span it was lost";
        }
        if (t > k_back_s) {
            EXPECT_EQ(gpu1->unmeasured_us, 0) << t;
            EXPECT_NEAR(testing::poll_mean(*gpu1), 30.0, 0.5) << t;
        }
    }
}

// Never recorded and lost when the source starts: a stand-in ("unopened-1") is listed lost in its
// place until the card opens; the card then takes the stand-in's place (DeviceInfo::replaces), its
// first poll's span unmeasured, and the stand-in is gone.
TEST(NvmlDevicesComeAndGo, StandInHoldsTheIndexOfANeverSeenCardUntilItOpens) {
    FakeDriver fake(two_cards(k_back_s));
    auto source = fake.source();
    ASSERT_TRUE(source);
    std::vector<std::string> log;
    source->set_notice_sink([&log](const std::string& line) { log.push_back(line); });
    source->expect_devices({});
    std::vector<telemetry::DeviceInfo> devices = source->devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[1].uuid, "unopened-1");
    EXPECT_EQ(devices[1].index, 1);
    EXPECT_EQ(devices[1].name, telemetry::k_stand_in_name);
    EXPECT_TRUE(telemetry::is_stand_in(devices[1].uuid));
    EXPECT_FALSE(telemetry::is_stand_in(devices[0].uuid));

    const double step = 5;
    for (double t = 0; t <= k_back_s + step; t += step) {
        fake.set_time(t);
        const auto polls = source->poll(wall_at(t));
        ASSERT_EQ(polls.size(), 2u) << t;
        const telemetry::DevicePoll* stand_in = poll_of(polls, "unopened-1");
        const telemetry::DevicePoll* gpu1 = poll_of(polls, "GPU-1");
        if (t < k_back_s) {
            ASSERT_NE(stand_in, nullptr) << t;
            EXPECT_TRUE(stand_in->lost) << t;
            EXPECT_EQ(gpu1, nullptr) << t;
            continue;
        }
        EXPECT_EQ(stand_in, nullptr) << t;
        ASSERT_NE(gpu1, nullptr) << t;
        EXPECT_FALSE(gpu1->lost) << t;
        EXPECT_EQ(gpu1->unmeasured_us, t == k_back_s ? std::llround(step * 1e6) : 0) << t;
    }
    devices = source->devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[1].uuid, "GPU-1");
    EXPECT_EQ(devices[1].replaces, "unopened-1");
    EXPECT_NE(std::find(log.begin(), log.end(),
                        "NVML: GPU 1 did not open and was never recorded; its time is recorded as "
                        "unmeasured under unopened-1 until it opens"),
              log.end());
    EXPECT_NE(std::find(log.begin(), log.end(),
                        "NVML: GPU 1 (GPU-1) opened; it takes over unopened-1 and the time it did "
                        "not open stays unmeasured"),
              log.end());
}

// An index this process may not open (NO_PERMISSION: another container's card) gets no stand-in.
TEST(NvmlDevicesComeAndGo, IndexWithoutPermissionGetsNoStandIn) {
    json scenario = two_cards(k_back_s);
    scenario["faults"][0]["error"] = 4; // NVML_ERROR_NO_PERMISSION
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->expect_devices({});
    const auto devices = source->devices();
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].uuid, "GPU-0");
    ASSERT_EQ(source->unopened_devices().size(), 1u);
}

TEST(NvmlDevicesComeAndGo, KnownCardReplacedAtItsIndexIsDroppedWhenTheIndexOpens) {
    FakeDriver fake(two_cards(10));
    auto source = fake.source();
    ASSERT_TRUE(source);
    telemetry::DeviceInfo known;
    known.uuid = "GPU-replaced";
    known.index = 1;
    source->expect_devices({known});
    fake.set_time(5);
    EXPECT_TRUE(poll_of(source->poll(wall_at(5)), "GPU-replaced")->lost);
    fake.set_time(10);
    const auto polls = source->poll(wall_at(10));
    EXPECT_EQ(poll_of(polls, "GPU-replaced"), nullptr);
    ASSERT_NE(poll_of(polls, "GPU-1"), nullptr);
}

TEST(NvmlDevicesComeAndGo, HotAddedCardIsReadFromTheEnumerationAfterItAppears) {
    json scenario = {{"devices",
                      {{{"uuid", "GPU-0"}, {"util", {{0, 60}}}},
                       {{"uuid", "GPU-1"}, {"util", {{0, 30}}}, {"present_from", 100}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    EXPECT_EQ(source->devices().size(), 1u);
    EXPECT_TRUE(source->unopened_devices().empty()) << "not counted: nothing failed";
    std::optional<double> first_seen;
    for (double t = 0; t <= 200; t += 5) {
        fake.set_time(t);
        const auto polls = source->poll(wall_at(t));
        if (!first_seen && poll_of(polls, "GPU-1") != nullptr) {
            first_seen = t;
        }
    }
    ASSERT_TRUE(first_seen.has_value());
    EXPECT_GE(*first_seen, 100.0);
    // The periodic enumeration finds it within one period.
    EXPECT_LE(*first_seen, 100.0 + static_cast<double>(NvmlSource::k_enumeration_period_us) / 1e6);
}

TEST(NvmlDevicesComeAndGo, CardSeenBeforeStaysListedLostWhileItsIndexFails) {
    // GPU 1 opens at first, then fails every call (GPU_IS_LOST) for longer than an
    // enumeration period: the enumerations in between keep it listed as lost.
    json scenario = two_cards(0);
    scenario["faults"] = {
        {{"function", "*"}, {"device", 1}, {"from", 10}, {"to", 200}, {"error", 15}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    for (double t = 0; t <= 210; t += 5) {
        fake.set_time(t);
        const auto polls = source->poll(wall_at(t));
        const telemetry::DevicePoll* gpu1 = poll_of(polls, "GPU-1");
        ASSERT_NE(gpu1, nullptr) << t;
        EXPECT_EQ(gpu1->lost, t >= 10 && t < 200) << t;
    }
}

} // namespace
} // namespace gua::nvml::devices_come_and_go_test

// SPDX-License-Identifier: Apache-2.0
// NVML events through the fake driver and the production loader: which GPUs register (the
// supported mask, NOT_SUPPORTED per device), an Xid at a scenario time delivered exactly once with
// its card, MIG ids naming the instance, events before registration never delivered, a driver
// without nvmlEventSetWait_v2, and a stop that joins the waiting thread within one wait.
#include "nvml/events.hpp"
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace gua::nvml {
namespace events_test { // named after the file: unique in a unity batch

using nlohmann::json;
using testing::FakeDriver;
using namespace std::chrono_literals;

/// Drains `stream` until it has `n` events or `timeout` passed.
std::vector<telemetry::FaultEvent> wait_for(telemetry::FaultStream& stream, std::size_t n,
                                            std::chrono::milliseconds timeout = 3s) {
    std::vector<telemetry::FaultEvent> out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
        stream.drain(out);
        std::this_thread::sleep_for(10ms);
    }
    stream.drain(out);
    return out;
}

json three_gpus() {
    return json{{"devices",
                 {{{"uuid", "GPU-a"}},
                  {{"uuid", "GPU-b"}, {"supported_event_types", 0x1 | 0x2}}, // no Xid events
                  {{"uuid", "GPU-c"},
                   {"mig", true},
                   {"mig_instances",
                    {{{"uuid", "MIG-c1"}, {"gpu_instance_id", 3}, {"compute_instance_id", 0}},
                     {{"uuid", "MIG-c2"}, {"gpu_instance_id", 5}, {"compute_instance_id", 1}}}}}}},
                {"events",
                 {{{"device", 0}, {"at", 10}, {"xid", 43}},
                  {{"device", 2}, {"at", 12}, {"xid", 31}, {"mig_instance", 1}},
                  {{"device", 2}, {"at", 13}, {"xid", 48}},
                  {{"device", 1}, {"at", 14}, {"xid", 79}},
                  {{"device", 0}, {"at", 15}, {"xid", 13}, {"sources", {"kmsg"}}}}}};
}

TEST(NvmlEvents, XidsArriveOnceWithTheirCardAndMigInstance) {
    FakeDriver fake(three_gpus());
    fake.set_time(5);
    auto source = fake.source();
    ASSERT_TRUE(source);
    auto stream = source->open_fault_stream();
    ASSERT_TRUE(stream);
    EXPECT_NE(stream->describe().find("Xid on 2 of 3 GPUs"), std::string::npos)
        << stream->describe();
    EXPECT_NE(stream->describe().find("GPU-b"), std::string::npos) << "named as not registered";
    EXPECT_TRUE(wait_for(*stream, 1, 400ms).empty()) << "nothing is due before t=10";
    fake.set_time(20);
    const std::vector<telemetry::FaultEvent> events = wait_for(*stream, 3);
    ASSERT_EQ(events.size(), 3U) << "GPU-b is not registered; the kmsg-only Xid is not NVML's";
    EXPECT_EQ(events[0].uuid, "GPU-a");
    EXPECT_EQ(events[0].xid, 43);
    EXPECT_FALSE(events[0].gpu_instance.has_value());
    EXPECT_EQ(events[1].uuid, "MIG-c2") << "GI 5 is the second instance";
    EXPECT_EQ(events[1].xid, 31);
    EXPECT_EQ(events[1].gpu_instance, 5U);
    EXPECT_EQ(events[1].compute_instance, 1U);
    EXPECT_EQ(events[2].uuid, "GPU-c") << "a whole-GPU event names the GPU";
    EXPECT_EQ(events[2].xid, 48);
    for (const telemetry::FaultEvent& e : events) {
        EXPECT_EQ(e.sources, telemetry::fault_from_nvml);
        EXPECT_FALSE(e.kmsg_seq.has_value());
    }
    EXPECT_TRUE(wait_for(*stream, 1, 400ms).empty()) << "each event is delivered once";
}

TEST(NvmlEvents, EventsBeforeRegistrationAreNotDelivered) {
    FakeDriver fake(three_gpus());
    fake.set_time(12.5); // after the Xids at 10 and 12
    auto source = fake.source();
    ASSERT_TRUE(source);
    auto stream = source->open_fault_stream();
    fake.set_time(30);
    const std::vector<telemetry::FaultEvent> events = wait_for(*stream, 1);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].xid, 48);
}

TEST(NvmlEvents, AnOldDriverHasNoEventsAndSaysSo) {
    FakeDriver fake(three_gpus());
    auto source = fake.source(testing::Variant::legacy);
    ASSERT_TRUE(source);
    auto stream = source->open_fault_stream();
    ASSERT_TRUE(stream);
    EXPECT_NE(stream->describe().find("not available"), std::string::npos) << stream->describe();
}

TEST(NvmlEvents, StopJoinsTheWaiterWithinOneWait) {
    FakeDriver fake(three_gpus());
    auto source = fake.source();
    ASSERT_TRUE(source);
    auto stream = source->open_fault_stream();
    std::this_thread::sleep_for(50ms); // the thread is inside a wait now
    const auto t0 = std::chrono::steady_clock::now();
    stream.reset();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, std::chrono::milliseconds(NvmlEventStream::k_wait_ms + 200));
}

TEST(NvmlEvents, ALostGpuKeepsTheWaitGoingForTheOthers) {
    json scenario = three_gpus();
    scenario["faults"] = {{{"function", "*"}, {"device", 1}, {"from", 8}, {"error", 15}}};
    scenario["devices"][1].erase("supported_event_types");
    FakeDriver fake(scenario);
    fake.set_time(5);
    auto source = fake.source();
    ASSERT_TRUE(source);
    auto stream = source->open_fault_stream();
    EXPECT_NE(stream->describe().find("Xid on 3 of 3 GPUs"), std::string::npos)
        << stream->describe();
    fake.set_time(9); // GPU-b is lost from t=8: the waits answer GPU_IS_LOST
    std::this_thread::sleep_for(300ms);
    fake.set_time(13.5);
    const std::vector<telemetry::FaultEvent> events = wait_for(*stream, 3);
    ASSERT_EQ(events.size(), 3U) << "the other GPUs' Xids still arrive";
    EXPECT_EQ(events[0].uuid, "GPU-a");
    EXPECT_EQ(events[2].uuid, "GPU-c");
}

} // namespace events_test
} // namespace gua::nvml

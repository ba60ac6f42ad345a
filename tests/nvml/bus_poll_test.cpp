// SPDX-License-Identifier: Apache-2.0
// The per-poll interconnect and bus readings on the fake driver: NVLink error totals and the
// row-remap flag from the field values, PCIe generation and width every poll, the link states and
// PCIe maxima held for 30 s; a card without NVLink or PCIe readings gets nullopt, never 0.
#include "nvml/bus_poll.hpp"
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gua::nvml {
namespace bus_poll_test { // named after the file: unique in a unity batch

using nlohmann::json;
using testing::FakeDriver;
using testing::wall_at;

json nvlink_card() {
    return {{"uuid", "GPU-0"},
            {"util", {{0, 80}}},
            {"pcie", {{"gen", {{0, 5}, {10.5, 3}}}, {"width", {{0, 16}, {10.5, 8}}}}},
            {"remap_failure", {{0, 0}, {40.5, 1}}},
            {"nvlink",
             {{"links", 4},
              {"down_at", {{2, 10.5}}},
              {"replay", {{0, 5}}},
              {"recovery", {{0, 1}}},
              {"crc_flit", {{0, 100}, {20.5, 700}}}}}};
}

TEST(BusPoll, ReadsEachPollAndHoldsTheLinkStatesForThirtySeconds) {
    FakeDriver fake(json{{"devices", {nvlink_card()}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    auto poll = source->poll(wall_at(0)).at(0);
    EXPECT_EQ(poll.readings.nvlink_links, 4);
    EXPECT_EQ(poll.readings.nvlink_links_active, 4);
    EXPECT_EQ(poll.readings.pcie_gen, 5);
    EXPECT_EQ(poll.readings.pcie_gen_max, 5);
    EXPECT_EQ(poll.readings.pcie_width_max, 16);
    EXPECT_EQ(poll.readings.nvlink_replays, 5);
    EXPECT_EQ(poll.readings.nvlink_recoveries, 1);
    EXPECT_EQ(poll.readings.nvlink_crc_errors, 100);
    EXPECT_EQ(poll.readings.remap_failure, 0);

    fake.set_time(25); // link 2 down since 10.5, the link at gen3 x8, CRC total 700
    poll = source->poll(wall_at(25)).at(0);
    EXPECT_EQ(poll.readings.pcie_gen, 3) << "current generation: every poll";
    EXPECT_EQ(poll.readings.pcie_width, 8);
    EXPECT_EQ(poll.readings.nvlink_crc_errors, 700) << "field values: every poll";
    EXPECT_EQ(poll.readings.nvlink_links_active, 4) << "held: read at 0, next at 30 s";

    fake.set_time(30);
    poll = source->poll(wall_at(30)).at(0);
    EXPECT_EQ(poll.readings.nvlink_links, 4);
    EXPECT_EQ(poll.readings.nvlink_links_active, 3) << "read again after k_bus_hold_us";
    static_assert(k_bus_hold_us == 30 * k_us_per_second);

    fake.set_time(45);
    EXPECT_EQ(source->poll(wall_at(45)).at(0).readings.remap_failure, 1);
}

TEST(BusPoll, AnIdleCardsLoweredLinkKeepsTheLatestBusyReading) {
    // Busy at gen 4 until 10 s, idle (the driver lowers the link to gen 1) until 20 s, busy again
    // on a link that trained at gen 2 only from 20 s.
    json card = {{"uuid", "GPU-0"},
                 {"util", {{0, 80}, {10, 0}, {20, 90}}},
                 {"pcie", {{"gen", {{0, 4}, {10, 1}, {20, 2}}}, {"width", {{0, 16}}}}}};
    FakeDriver fake(json{{"devices", {card}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    for (const auto& [t, gen] :
         std::vector<std::pair<int, int>>{{5, 4}, {15, 4}, {19, 4}, {25, 2}, {29, 2}}) {
        fake.set_time(t);
        const auto poll = source->poll(wall_at(t)).at(0);
        EXPECT_EQ(poll.readings.pcie_gen, gen) << "at " << t << " s";
        EXPECT_EQ(poll.readings.pcie_width, 16);
    }
}

TEST(BusPoll, ACardNeverBusyReportsItsLatestLink) {
    json card = {{"uuid", "GPU-0"},
                 {"util", {{0, 0}}},
                 {"pcie", {{"gen", {{0, 3}, {10, 1}}}, {"width", {{0, 16}}}}}};
    FakeDriver fake(json{{"devices", {card}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    EXPECT_EQ(source->poll(wall_at(0)).at(0).readings.pcie_gen, 3);
    fake.set_time(15);
    EXPECT_EQ(source->poll(wall_at(15)).at(0).readings.pcie_gen, 1);
}

TEST(BusPoll, ACardWithoutTheReadingsGetsNoneNeverZero) {
    json card = {{"uuid", "GPU-1"},
                 {"util", {{0, 80}}},
                 {"unsupported_fields", {145}},
                 {"not_supported",
                  {"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
                   "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth"}}};
    FakeDriver fake(json{{"devices", {card}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto poll = source->poll(wall_at(5)).at(0);
    const telemetry::CardReadings& r = poll.readings;
    for (const auto& v : {r.nvlink_replays, r.nvlink_recoveries, r.nvlink_crc_errors,
                          r.nvlink_links, r.nvlink_links_active, r.pcie_gen, r.pcie_gen_max,
                          r.pcie_width, r.pcie_width_max, r.remap_failure}) {
        EXPECT_FALSE(v.has_value());
    }
    EXPECT_EQ(poll.read_errors, 0) << "NOT_SUPPORTED is not an error";
}

} // namespace bus_poll_test
} // namespace gua::nvml

// SPDX-License-Identifier: Apache-2.0
// Bus and interconnect readings through the fake driver: PCIe generation and width follow the
// scenario's series against their maxima, the row remapper's failure flag (field 145),
// persistence mode, NVLink links (down ones counted apart) and their error counters summed; a card
// without NVLink and an old driver without these calls read as nullopt, never 0.
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

namespace gua::nvml {
namespace fabric_test { // named after the file: unique in a unity batch

using nlohmann::json;
using testing::FakeDriver;

json two_cards() {
    return json{
        {"devices",
         {{{"uuid", "GPU-nvlink"},
           {"pcie", {{"gen", {{0, 5}, {10, 1}}}, {"gen_max", 5}, {"width", {{0, 16}, {20, 8}}}}},
           {"remap_failure", {{0, 0}, {30, 1}}},
           {"persistence_mode", 0},
           {"nvlink",
            {{"links", 18},
             {"down", {3, 7}},
             {"replay", {{0, 2}, {15, 9}}},
             {"recovery", {{0, 1}}},
             {"crc_flit", {{0, 40}}}}}},
          {{"uuid", "GPU-pcie"}, {"unsupported_fields", {145}}}}}};
}

TEST(NvmlFabric, ReadingsFollowTheScenario) {
    FakeDriver fake(two_cards());
    auto source = fake.source();
    ASSERT_TRUE(source);
    fake.set_time(5);
    std::vector<FabricReading> r = source->read_fabric();
    ASSERT_EQ(r.size(), 2U);
    EXPECT_EQ(r[0].uuid, "GPU-nvlink");
    EXPECT_EQ(r[0].pcie_gen, 5U);
    EXPECT_EQ(r[0].pcie_gen_max, 5U);
    EXPECT_EQ(r[0].pcie_width, 16U);
    EXPECT_EQ(r[0].pcie_width_max, 16U);
    EXPECT_EQ(r[0].remap_failure, false);
    EXPECT_EQ(r[0].persistence, false);
    EXPECT_EQ(r[0].nvlink_links, 18U);
    EXPECT_EQ(r[0].nvlink_active, 16U) << "links 3 and 7 are down";
    EXPECT_EQ(r[0].nvlink_replay, 2U);
    EXPECT_EQ(r[0].nvlink_recovery, 1U);
    EXPECT_EQ(r[0].nvlink_crc, 40U);
    EXPECT_FALSE(r[1].nvlink_links.has_value()) << "no NVLink: nullopt, not 0 links";
    EXPECT_FALSE(r[1].remap_failure.has_value()) << "field 145 not supported";
    EXPECT_EQ(r[1].persistence, true);

    fake.set_time(25);
    r = source->read_fabric();
    EXPECT_EQ(r[0].pcie_gen, 1U);
    EXPECT_EQ(r[0].pcie_width, 8U);
    EXPECT_EQ(r[0].nvlink_replay, 9U);
    fake.set_time(30);
    EXPECT_EQ(source->read_fabric()[0].remap_failure, true);
}

TEST(NvmlFabric, AnOldDriverSaysNothing) {
    FakeDriver fake(two_cards());
    auto source = fake.source(testing::Variant::legacy);
    ASSERT_TRUE(source);
    const std::vector<FabricReading> r = source->read_fabric();
    ASSERT_EQ(r.size(), 2U);
    EXPECT_FALSE(r[0].pcie_gen.has_value());
    EXPECT_FALSE(r[0].persistence.has_value());
    EXPECT_FALSE(r[0].remap_failure.has_value());
    EXPECT_FALSE(r[0].nvlink_links.has_value());
}

} // namespace fabric_test
} // namespace gua::nvml

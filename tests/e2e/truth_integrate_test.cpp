// SPDX-License-Identifier: Apache-2.0
// The ground-truth integrator itself, on scenarios small enough to integrate by hand.
#include "support/ground_truth.hpp"

#include <gtest/gtest.h>

namespace gua::test {
namespace {

using nlohmann::json;

TEST(TruthIntegrate, StatesFollowTheRulesInstantByInstant) {
    // Card 0: 100 % over [10, 20), 5 % elsewhere; A holds 8000 MiB until 30; B 50 MiB throughout.
    const json scenario = {
        {"devices", json::array({{{"util", json::array({{0, 5}, {10, 100}, {20, 5}})}}})},
        {"processes", json::array({{{"device", 0},
                                    {"who", "a"},
                                    {"end", 30},
                                    {"memory_mib", json::array({{0, 8000}})},
                                    {"sm_util", json::array({{0, 0}, {10, 90}, {20, 0}})}},
                                   {{"device", 0},
                                    {"who", "b"},
                                    {"memory_mib", json::array({{0, 50}})},
                                    {"sm_util", json::array({{0, 10}})}}})}};
    const GroundTruth truth(scenario);
    ASSERT_EQ(truth.cards().size(), 1U);
    const std::string uuid = truth.cards()[0].uuid;
    EXPECT_EQ(uuid, "GPU-00000000-0000-0000-0000-000000000000");
    const CardTruth t = truth.integrate(uuid, {{0, 15}, {15, 40}});
    EXPECT_DOUBLE_EQ(t.recorded_s, 40);
    EXPECT_DOUBLE_EQ(t.active_s, 10);
    EXPECT_DOUBLE_EQ(t.idle_held_s, 20);  // [0, 10) and [20, 30): A's 8000 MiB
    EXPECT_DOUBLE_EQ(t.truly_idle_s, 10); // [30, 40): B's 50 MiB is below the holder threshold
    // Active by SM share 90:10, idle-held by memory 8000:50.
    EXPECT_DOUBLE_EQ(t.identity_s.at("a"), 9 + 20 * 8000.0 / 8050.0);
    EXPECT_DOUBLE_EQ(t.identity_s.at("b"), 1 + 20 * 50.0 / 8050.0);
}

TEST(TruthIntegrate, ActiveWithoutProcessesAndMigInstances) {
    const json scenario = {
        {"devices", json::array({{{"uuid", "GPU-x"}, {"util", json::array({{0, 50}})}},
                                 {{"uuid", "GPU-m"},
                                  {"mig", true},
                                  {"mig_instances",
                                   json::array({{{"uuid", "MIG-1"}}, {{"uuid", "MIG-2"}}})}}})}};
    const GroundTruth truth(scenario);
    ASSERT_EQ(truth.cards().size(), 3U);
    EXPECT_TRUE(truth.card("GPU-x").measurable);
    EXPECT_FALSE(truth.card("MIG-2").measurable);
    EXPECT_EQ(truth.card("MIG-2").mig_slot, 1);
    EXPECT_THROW(truth.card("GPU-m"), std::out_of_range);
    const CardTruth t = truth.integrate("GPU-x", {{2, 7}});
    EXPECT_DOUBLE_EQ(t.active_s, 5);
    EXPECT_DOUBLE_EQ(t.identity_s.at("(no process)"), 5);
}

TEST(TruthIntegrate, TheFakeNeverSeesTheLabels) {
    const json s = fake_scenario({{"processes", json::array({{{"pid", 1}, {"who", "a"}}})}});
    EXPECT_FALSE(s["processes"][0].contains("who"));
    EXPECT_EQ(s["processes"][0]["pid"], 1);
}

} // namespace
} // namespace gua::test

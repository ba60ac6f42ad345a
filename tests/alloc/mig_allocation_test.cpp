// SPDX-License-Identifier: Apache-2.0
// MIG instances as the allocation sources name them, through the real NVML loader and the fake
// driver: the source gives each instance's GPU-instance id, so a mapping file "0.2" allocates
// instance 2 of card 0 only, and "0" the whole card.
#include "alloc/timeline.hpp"
#include "nvml/fake_driver.hpp"
#include "sampler/allocation_fold.hpp"

#include <gtest/gtest.h>

namespace gua::alloc {
namespace mig_allocation_test { // named after the file: unique in a unity batch

using nlohmann::json;

json mig_card() {
    return {{"devices",
             {{{"uuid", "GPU-0"},
               {"name", "NVIDIA A100-SXM4-80GB"},
               {"memory_total_mib", 81920},
               {"util", {{0, 0}}},
               {"mig", true},
               {"mig_instances",
                {{{"uuid", "MIG-a"}, {"memory_total_mib", 40000}, {"gpu_instance_id", 1}},
                 {{"uuid", "MIG-b"}, {"memory_total_mib", 40000}, {"gpu_instance_id", 2}}}}}}},
            {"processes", json::array()}};
}

TEST(MigAllocation, InstancesAreAskedForByTheirGpuInstanceId) {
    nvml::testing::FakeDriver fake(mig_card());
    auto source = fake.source();
    ASSERT_TRUE(source);
    const std::vector<telemetry::DeviceInfo> devices = source->devices();
    ASSERT_EQ(devices.size(), 2U);
    EXPECT_EQ(source->gpu_instance_of("MIG-a"), std::optional<unsigned>(1));
    EXPECT_EQ(source->gpu_instance_of("MIG-b"), std::optional<unsigned>(2));
    EXPECT_EQ(source->gpu_instance_of("GPU-0"), std::nullopt);

    Snapshot instance; // mapping file "0.2"
    instance.entries.push_back(
        {DeviceRef{0U, 2U, ""}, Allocation{AllocationKind::slurm_job, "7", "", ""}});
    Snapshot whole; // mapping file "0"
    whole.entries.push_back(
        {DeviceRef{0U, std::nullopt, ""}, Allocation{AllocationKind::slurm_job, "8", "", ""}});
    for (const telemetry::DeviceInfo& d : devices) {
        const CardQuery q = sampler::card_query(d, source->gpu_instance_of(d.uuid));
        EXPECT_EQ(q.uuid, "GPU-0");
        EXPECT_EQ(q.mig_uuid, d.uuid);
        EXPECT_EQ(card_state(instance, q).state,
                  d.uuid == "MIG-b" ? AllocationState::allocated : AllocationState::unallocated)
            << d.uuid;
        EXPECT_EQ(card_state(whole, q).state, AllocationState::allocated) << d.uuid;
    }
}

} // namespace mig_allocation_test
} // namespace gua::alloc

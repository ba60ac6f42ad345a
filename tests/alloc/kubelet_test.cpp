// SPDX-License-Identifier: Apache-2.0
// The kubelet pod-resources source against a real gRPC server (the same .proto) on a unix socket:
// allocations that change over time, MIG and time-sliced device ids, and the server going away.
#include "alloc/kubelet_source.hpp"
#include "fake_kubelet.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace gua::alloc {
namespace kubelet_test {

using fake_kubelet::FakeLister;
using fake_kubelet::serve;

// The client of gua-kubelet.so, linked into the tests (which register the .proto themselves).
std::unique_ptr<PodResourcesClient> client_of(const std::string& socket, DurationUs timeout_us) {
    return std::unique_ptr<PodResourcesClient>(gua_kubelet_make_client(socket.c_str(), timeout_us));
}

CardQuery gpu(unsigned index, const std::string& uuid) {
    CardQuery query;
    query.index = index;
    query.uuid = uuid;
    return query;
}

CardQuery mig(unsigned index, const std::string& uuid, unsigned gi, const std::string& mig_uuid) {
    CardQuery query = gpu(index, uuid);
    query.gpu_instance = gi;
    query.mig_uuid = mig_uuid;
    return query;
}

Allocation pod(const std::string& ns, const std::string& name) {
    return Allocation{AllocationKind::pod, ns + "/" + name, "", ns};
}

void wait_readings(const KubeletSource& source, std::uint64_t more) {
    const std::uint64_t until = source.readings() + more;
    for (int i = 0; i < 500 && source.readings() < until; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

TEST(AllocKubelet, ClientListsPodsContainersAndDevices) {
    test::TempDir dir;
    FakeLister lister;
    lister.set({{"ml", "train", "nvidia.com/gpu", {"GPU-1", "GPU-2"}},
                {"web", "cache", "example.com/fpga", {"fpga0"}}});
    const auto server = serve(lister, dir.file("kubelet.sock"));
    ASSERT_NE(server, nullptr);
    const auto client = client_of(dir.file("kubelet.sock"), k_us_per_second);
    const Result<std::vector<PodDevices>> listed = client->list();
    ASSERT_TRUE(listed) << listed.error().message;
    ASSERT_EQ(listed.value().size(), 2U);
    EXPECT_EQ(listed.value()[0].pod_namespace, "ml");
    EXPECT_EQ(listed.value()[0].pod, "train");
    EXPECT_EQ(listed.value()[0].container, "main");
    EXPECT_EQ(listed.value()[0].device_ids, (std::vector<std::string>{"GPU-1", "GPU-2"}));
    const Snapshot snapshot = snapshot_of(listed);
    ASSERT_EQ(snapshot.entries.size(), 2U); // the FPGA is no GPU
    EXPECT_EQ(snapshot.entries[1].first.uuid, "GPU-2");
    EXPECT_EQ(snapshot.entries[1].second, pod("ml", "train"));
    server->Shutdown();
}

TEST(AllocKubelet, AllocationsChangeOverTimeAndTheKubeletGoingAwayIsUnknown) {
    test::TempDir dir;
    const std::string socket = dir.file("kubelet.sock");
    FakeLister lister;
    // Card 0 whole to ml/train; card 1 in MIG mode, instance 1 to lab/notebook; card 2 free.
    lister.set({{"ml", "train", "nvidia.com/gpu", {"GPU-aaa"}},
                {"lab", "notebook", "nvidia.com/mig-1g.10gb", {"MIG-bbb"}}});
    auto server = serve(lister, socket);
    ASSERT_NE(server, nullptr);
    KubeletSource source("kubelet " + socket, client_of(socket, 500 * k_us_per_ms),
                         100 * k_us_per_ms);
    const TimeUs start = wall_now();
    wait_readings(source, 2);
    const TimeUs changed = wall_now();
    // ml/train ends; a time-sliced pod takes card 2 (replica suffix "::1").
    lister.set({{"lab", "notebook", "nvidia.com/mig-1g.10gb", {"MIG-bbb"}},
                {"ml", "sweep", "nvidia.com/gpu", {"GPU-ccc::1"}}});
    wait_readings(source, 3);
    const TimeUs gone = wall_now();
    server->Shutdown();
    server.reset();
    wait_readings(source, 3);
    const TimeUs end = wall_now();

    const auto card0 = source.query(gpu(0, "GPU-aaa"), start, end);
    ASSERT_EQ(card0.size(), 3U);
    EXPECT_EQ(card0[0].allocations, std::vector<Allocation>{pod("ml", "train")});
    EXPECT_EQ(card0[1].state, AllocationState::unallocated);
    EXPECT_LT(std::abs(card0[0].end - changed), k_us_per_second);
    EXPECT_EQ(card0[2].state, AllocationState::unknown);
    EXPECT_NE(card0[2].reason.find(socket), std::string::npos) << card0[2].reason;
    EXPECT_LT(std::abs(card0[2].begin - gone), k_us_per_second);

    const auto instance1 = source.query(mig(1, "GPU-bbb-parent", 1, "MIG-bbb"), start, gone);
    ASSERT_EQ(instance1.size(), 1U);
    EXPECT_EQ(instance1[0].allocations, std::vector<Allocation>{pod("lab", "notebook")});
    const auto instance2 = source.query(mig(1, "GPU-bbb-parent", 2, "MIG-other"), start, gone);
    ASSERT_EQ(instance2.size(), 1U);
    EXPECT_EQ(instance2[0].state, AllocationState::unallocated);

    const auto card2 = source.query(gpu(2, "GPU-ccc"), start, gone);
    ASSERT_EQ(card2.size(), 2U);
    EXPECT_EQ(card2[0].state, AllocationState::unallocated);
    EXPECT_EQ(card2[1].allocations, std::vector<Allocation>{pod("ml", "sweep")});
    EXPECT_LT(std::abs(card2[1].begin - changed), k_us_per_second);
}

TEST(AllocKubelet, NoKubeletAtAllIsUnknownFromTheStart) {
    test::TempDir dir;
    KubeletSource source("kubelet", client_of(dir.file("none.sock"), 200 * k_us_per_ms),
                         100 * k_us_per_ms);
    const TimeUs start = wall_now();
    wait_readings(source, 1);
    const auto got = source.query(gpu(0, "GPU-aaa"), start, wall_now());
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].state, AllocationState::unknown);
}

} // namespace kubelet_test
} // namespace gua::alloc

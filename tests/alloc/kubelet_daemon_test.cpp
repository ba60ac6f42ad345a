// SPDX-License-Identifier: Apache-2.0
// Kubernetes ground truth over time: `gua daemon` with `[allocations] kubelet_socket` records four
// cards of the fake driver (a whole idle GPU, a GPU held idle by a process, two MIG instances)
// while a pod-resources server in the test (the same .proto) hands them to pods that change twice,
// MIG and time-sliced device ids included. Read back through store::Reader and audit::classify,
// each card's allocated time and four states are within 1 pp of the truth integrated here from
// when the server served each version of its pod list.
#include "audit/classify.hpp"
#include "fake_kubelet.hpp"
#include "store/reader.hpp"
#include "support/daemon_process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

namespace gua::alloc {
namespace kubelet_daemon_test { // named after the file: unique in a unity batch

using fake_kubelet::FakeLister;
using fake_kubelet::FakePod;
using nlohmann::json;

constexpr const char* k_idle = "GPU-11111111-0000-0000-0000-000000000000";
constexpr const char* k_mig_parent = "GPU-22222222-0000-0000-0000-000000000000";
constexpr const char* k_mig_a = "MIG-22222222-0000-0000-0000-000000000001";
constexpr const char* k_mig_b = "MIG-22222222-0000-0000-0000-000000000002";
constexpr const char* k_held = "GPU-33333333-0000-0000-0000-000000000000";

/// The pod lists the server hands out, in order (version 0, 1, 2).
std::vector<std::vector<FakePod>> versions() {
    return {
        {{"ml", "train", "nvidia.com/gpu", {k_idle}},
         {"lab", "notebook", "nvidia.com/mig-3g.40gb", {k_mig_a}}},
        {{"lab", "notebook", "nvidia.com/mig-3g.40gb", {k_mig_a}},
         {"ml", "sweep", "nvidia.com/mig-3g.40gb", {k_mig_b}},
         {"web", "serve", "nvidia.com/gpu", {std::string(k_held) + "::1"}}},
        {},
    };
}

/// The pod owning card `uuid` in pod list `pods` ("" when none); a time-slicing replica suffix
/// "::N" names the card too.
std::string owner(const std::vector<FakePod>& pods, const std::string& uuid) {
    for (const FakePod& p : pods) {
        for (const std::string& id : p.device_ids) {
            if (id == uuid || id.starts_with(uuid + "::")) {
                return p.pod_namespace + "/" + p.name;
            }
        }
    }
    return {};
}

json scenario() {
    const json mig_instances = {
        {{"uuid", k_mig_a}, {"name", "MIG 3g.40gb"}, {"gpu_instance_id", 1}},
        {{"uuid", k_mig_b}, {"name", "MIG 3g.40gb"}, {"gpu_instance_id", 2}}};
    return {{"devices",
             {{{"uuid", k_idle}, {"util", {{0, 0}}}},
              {{"uuid", k_mig_parent},
               {"name", "NVIDIA A100-SXM4-80GB"},
               {"mig", true},
               {"mig_instances", mig_instances}},
              {{"uuid", k_held}, {"util", {{0, 0}}}}}},
            {"processes",
             {{{"device", 2},
               {"pid", static_cast<int>(::getpid())},
               {"type", "compute"},
               {"start", 0},
               {"end", 100000},
               {"memory_mib", {{0, 6000}}},
               {"sm_util", {{0, 0}}}}}}};
}

DurationUs overlap(TimeUs a0, TimeUs a1, TimeUs b0, TimeUs b1) {
    return std::max<DurationUs>(std::min(a1, b1) - std::max(a0, b0), 0);
}

/// When each version of the pod list was first served: the daemon's source sees it from that
/// List on (it times the reading as its call starts, a few milliseconds earlier).
std::vector<TimeUs> version_starts(const FakeLister& lister, std::size_t count) {
    std::vector<TimeUs> starts(count, store::k_time_max);
    for (const auto& [at, version] : lister.served()) {
        auto& s = starts.at(static_cast<std::size_t>(version));
        s = std::min(s, at);
    }
    starts[0] = store::k_time_min; // served before the daemon's first tick
    return starts;
}

struct Card {
    DurationUs recorded = 0;
    DurationUs truth_allocated = 0; ///< integrated from the served versions
    DurationUs allocated = 0;       ///< as recorded
    audit::StateTimes states;
};

TEST(KubeletDaemon, PodsChangingOverTimeIncludingMigMatchTheTruthPerCard) {
    test::TempDir dir;
    const std::string socket = dir.file("kubelet.sock");
    const auto lists = versions();
    FakeLister lister;
    lister.set(lists[0]);
    auto server = fake_kubelet::serve(lister, socket);
    ASSERT_NE(server, nullptr);
    std::ofstream(dir.file("scenario.json")) << scenario().dump();
    std::ofstream(dir.file("gua.toml")) << "[allocations]\nkubelet_socket = \"" << socket << "\"\n";
    auto daemon =
        test::start_gua({"daemon", "--db", dir.file("gua.db"), "--config", dir.file("gua.toml"),
                         "--nvml-library", std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1",
                         "--interval", "500ms", "--ticks", "24", "--quiet"},
                        {{"GUA_FAKE_NVML_SCENARIO", dir.file("scenario.json")},
                         {"GUA_FAKE_NVML_CLOCK_FILE", ""},
                         {"GUA_NVML_LIBRARY", ""},
                         {"GUA_KUBELET_MODULE", ""}},
                        dir.path(), "daemon");
    // The pods change twice while the daemon records 12 s: about 4 s and 8 s after its first
    // List (it lists once before its first tick).
    ASSERT_TRUE(
        test::poll_until([&] { return !lister.served().empty(); }, std::chrono::seconds(20)))
        << daemon->err();
    std::this_thread::sleep_for(std::chrono::milliseconds(4000));
    lister.set(lists[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(4000));
    lister.set(lists[2]);
    ASSERT_EQ(daemon->wait_exit(std::chrono::seconds(40)), std::optional<int>(0)) << daemon->err();
    server->Shutdown();
    const std::vector<TimeUs> starts = version_starts(lister, lists.size());
    ASSERT_LT(starts[2], store::k_time_max) << "the daemon never read the last pod list";

    store::Database db(dir.file("gua.db"), store::OpenMode::read_only);
    store::Reader reader(db);
    std::map<std::int64_t, std::string> uuid_of;
    for (const store::GpuRow& g : reader.gpus()) {
        uuid_of[g.id] = g.uuid;
    }
    std::map<std::string, Card> cards;
    reader.scan(store::k_time_min, store::k_time_max, [&](const audit::CardTick& t) {
        const std::string& uuid = uuid_of.at(t.gpu);
        Card& c = cards[uuid];
        const TimeUs t1 = t.t0 + t.duration_us;
        c.recorded += t.duration_us;
        c.allocated += t.allocation.allocated_us;
        c.states += audit::classify(t, audit::Thresholds{});
        for (std::size_t v = 0; v < lists.size(); ++v) {
            const TimeUs end = v + 1 < lists.size() ? starts[v + 1] : store::k_time_max;
            if (!owner(lists[v], uuid).empty()) {
                c.truth_allocated += overlap(t.t0, t1, starts[v], end);
            }
        }
    });
    ASSERT_EQ(cards.size(), 4U);
    for (const auto& [uuid, c] : cards) {
        SCOPED_TRACE(uuid);
        ASSERT_GT(c.recorded, 10 * k_us_per_second);
        const double pp = 100.0 / static_cast<double>(c.recorded);
        EXPECT_GT(c.truth_allocated, k_us_per_second); // every card was a pod's a while
        EXPECT_LT(c.truth_allocated, c.recorded - k_us_per_second); // and free a while
        EXPECT_NEAR(static_cast<double>(c.allocated) * pp,
                    static_cast<double>(c.truth_allocated) * pp, 1.0);
        EXPECT_EQ(c.states.active, 0);
        if (uuid == k_mig_a || uuid == k_mig_b) {
            // No utilization for MIG instances: unmeasured throughout, never allocated-unused by
            // inference, however long a pod held them.
            EXPECT_EQ(c.states.unmeasured, c.recorded);
            EXPECT_EQ(c.states.allocated_unused, 0);
        } else if (uuid == k_held) {
            // Held idle by its process whether a pod had it or not: idle-held, never unused.
            EXPECT_NEAR(static_cast<double>(c.states.idle_held) * pp, 100.0, 1.0);
            EXPECT_EQ(c.states.allocated_unused, 0);
        } else {
            EXPECT_NEAR(static_cast<double>(c.states.allocated_unused) * pp,
                        static_cast<double>(c.truth_allocated) * pp, 1.0);
            EXPECT_NEAR(static_cast<double>(c.states.truly_idle + c.states.unmeasured) * pp,
                        static_cast<double>(c.recorded - c.truth_allocated) * pp, 1.0);
        }
    }
    // The pods as the reader lists them: kind pod, account the namespace, no user.
    std::set<std::string> pods;
    for (const audit::AllocationRow& row :
         reader.allocations(store::k_time_min, store::k_time_max)) {
        EXPECT_EQ(row.kind, "pod");
        EXPECT_EQ(row.account, row.id.substr(0, row.id.find('/')));
        pods.insert(row.id);
    }
    EXPECT_EQ(pods, (std::set<std::string>{"ml/train", "lab/notebook", "ml/sweep", "web/serve"}));
}

} // namespace kubelet_daemon_test
} // namespace gua::alloc

// SPDX-License-Identifier: Apache-2.0
// What reading allocations costs a host of 8 GPUs and 50 pods: one scan of a job-mapping
// directory, one kubelet pod-resources List over gRPC (a real server on a unix socket), the
// consumer's per-tick queries (8 cards, one 30 s span), the sampler's crossing of each card-tick
// with them, and the report reader's per-card-tick shares. docs/PERFORMANCE.md records the figures.
#include "alloc/kubelet_source.hpp"
#include "alloc/mapping_dir.hpp"
#include "alloc/timeline.hpp"
#include "podresources_v1.grpc.pb.h"
#include "sampler/allocation_fold.hpp"
#include "store/allocations.hpp"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

namespace {

using namespace gua;
using namespace gua::alloc;

constexpr int k_gpus = 8;
constexpr int k_pods = 50;

std::string gpu_uuid(int index) {
    return "GPU-" + std::to_string(10000000 + index) + "-aaaa-bbbb-cccc-0123456789ab";
}

// A scratch directory removed at exit.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        std::string pattern = std::filesystem::temp_directory_path() / "gua-alloc-bench.XXXXXX";
        path = ::mkdtemp(pattern.data());
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
};

// 8 mapping files (jobs 1000..1007) with their owner files.
void BM_MappingDirScan(benchmark::State& state) {
    ScratchDir dir;
    std::filesystem::create_directory(dir.path + "/.gua-owners");
    for (int i = 0; i < k_gpus; ++i) {
        std::ofstream(dir.path + "/" + std::to_string(i)) << 1000 + i << "\n";
        std::ofstream(dir.path + "/.gua-owners/" + std::to_string(1000 + i))
            << "user=u" << i << "\naccount=a\n";
    }
    for (auto _ : state) {
        Snapshot snapshot = read_mapping_dir(dir.path);
        benchmark::DoNotOptimize(snapshot);
    }
}
BENCHMARK(BM_MappingDirScan)->Unit(benchmark::kMicrosecond);

// 50 pods of one container each: 8 hold one GPU, the others only CPU-side devices.
class Lister final : public v1::PodResourcesLister::Service {
  public:
    grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                      v1::ListPodResourcesResponse* response) override {
        for (int i = 0; i < k_pods; ++i) {
            v1::PodResources* pod = response->add_pod_resources();
            pod->set_name("pod-" + std::to_string(i));
            pod->set_namespace_("team-" + std::to_string(i % 5));
            v1::ContainerDevices* devices = pod->add_containers()->add_devices();
            devices->set_resource_name(i < k_gpus ? "nvidia.com/gpu" : "example.com/nic");
            devices->add_device_ids(i < k_gpus ? gpu_uuid(i) : "nic" + std::to_string(i));
        }
        return grpc::Status::OK;
    }
};

void BM_KubeletList(benchmark::State& state) {
    ScratchDir dir;
    Lister lister;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + dir.path + "/kubelet.sock",
                             grpc::InsecureServerCredentials());
    builder.RegisterService(&lister);
    const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    const auto client = load_pod_resources_client(kubelet_module_path(), dir.path + "/kubelet.sock",
                                                  2 * k_us_per_second);
    for (auto _ : state) {
        Snapshot snapshot = snapshot_of(client->list());
        if (snapshot.entries.size() != k_gpus) {
            state.SkipWithError("the List answer lost GPUs");
            break;
        }
        benchmark::DoNotOptimize(snapshot);
    }
    server->Shutdown();
}
BENCHMARK(BM_KubeletList)->Unit(benchmark::kMicrosecond);

// The consumer's per-tick work: 8 cards asked about one 30 s span in which two jobs changed.
void BM_QueryEightCardsPerTick(benchmark::State& state) {
    Timeline timeline(3 * k_us_per_second);
    Snapshot all;
    for (int i = 0; i < k_gpus; ++i) {
        DeviceRef ref;
        ref.uuid = gpu_uuid(i);
        all.entries.push_back(
            {ref, {AllocationKind::pod, "team/pod-" + std::to_string(i), "", "team"}});
    }
    Snapshot fewer = all;
    fewer.entries.resize(k_gpus - 2);
    timeline.record(0, all);
    timeline.record(10 * k_us_per_second, fewer);
    timeline.record(20 * k_us_per_second, all);
    timeline.confirm(30 * k_us_per_second);
    for (auto _ : state) {
        for (int i = 0; i < k_gpus; ++i) {
            CardQuery card;
            card.index = static_cast<unsigned>(i);
            card.uuid = gpu_uuid(i);
            auto segments = timeline.query(card, 0, 30 * k_us_per_second);
            benchmark::DoNotOptimize(segments);
        }
    }
}
BENCHMARK(BM_QueryEightCardsPerTick)->Unit(benchmark::kMicrosecond);

// The sampler's per-tick work with allocations: 50 pods on 8 cards (time-sliced, up to 7 on a
// card), two of them ending mid-tick; for each card one query over the 30 s tick and the crossing
// with its six 5 s poll spans, owners included.
void BM_CrossEightCardsPerTick(benchmark::State& state) {
    Timeline timeline(3 * k_us_per_second);
    Snapshot all;
    for (int p = 0; p < k_pods; ++p) {
        DeviceRef ref;
        ref.uuid = gpu_uuid(p % k_gpus);
        all.entries.push_back(
            {ref, {AllocationKind::pod, "team/pod-" + std::to_string(p), "", "team"}});
    }
    Snapshot fewer = all;
    fewer.entries.resize(k_pods - 2);
    timeline.record(0, all);
    timeline.record(12 * k_us_per_second, fewer);
    timeline.confirm(30 * k_us_per_second);
    sampler::AllocationFold fold;
    sampler::AllocationFold::Totals total;
    for (int poll = 0; poll < 6; ++poll) {
        const sampler::AllocationFold::Totals before = total;
        total.active += 2e6;
        total.not_held += 3e6;
        fold.add(poll * 5 * k_us_per_second, (poll + 1) * 5 * k_us_per_second, before, total);
    }
    telemetry::CardTickRecord record;
    record.active_us = 12 * k_us_per_second;
    record.idle_unlisted_us = 18 * k_us_per_second;
    for (auto _ : state) {
        for (int i = 0; i < k_gpus; ++i) {
            CardQuery card;
            card.index = static_cast<unsigned>(i);
            card.uuid = gpu_uuid(i);
            fold.cross(timeline.query(card, 0, 30 * k_us_per_second), 0, 30 * k_us_per_second,
                       record);
            benchmark::DoNotOptimize(record.allocation);
        }
    }
}
BENCHMARK(BM_CrossEightCardsPerTick)->Unit(benchmark::kMicrosecond);

// The report reader's per-card-tick work: a 30-day window of 8 cards, each allocated to a new job
// every hour (5,760 spans), scanned tick by tick (30 s) in time order. Reported per card-tick.
void BM_ReaderSharesPerCardTick(benchmark::State& state) {
    constexpr int k_hours = 30 * 24;
    store::WindowAllocations window;
    for (int g = 0; g < k_gpus; ++g) {
        for (int h = 0; h < k_hours; ++h) {
            window.spans.push_back({h % k_pods, g, h * k_us_per_hour, (h + 1) * k_us_per_hour});
        }
    }
    audit::CardTick tick;
    tick.duration_us = 30 * k_us_per_second;
    std::int64_t ticks = 0;
    for (auto _ : state) {
        store::AllocationShares shares(window);
        for (TimeUs t0 = 0; t0 < 2 * k_us_per_hour; t0 += tick.duration_us) {
            for (int g = 0; g < k_gpus; ++g) {
                tick.gpu = static_cast<std::uint32_t>(g);
                tick.t0 = t0;
                shares.fill(tick);
                benchmark::DoNotOptimize(tick.allocations);
                ++ticks;
            }
        }
    }
    state.SetItemsProcessed(ticks);
}
BENCHMARK(BM_ReaderSharesPerCardTick)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();

// SPDX-License-Identifier: Apache-2.0
// KubeletSource: the kubelet pod-resources API (v1 List) asked once a second; GPUs and MIG
// instances of pods become allocations of kind pod.
#pragma once

#include "alloc/source.hpp"
#include "alloc/timeline.hpp"
#include "core/result.hpp"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gua::alloc {

/// One container's devices of one resource, as the kubelet lists them.
struct PodDevices {
    std::string pod_namespace;
    std::string pod;
    std::string container;
    std::string resource; ///< e.g. "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
    std::vector<std::string> device_ids;
};

/// Lists what the kubelet has handed out; one call per reading.
class PodResourcesClient {
  public:
    virtual ~PodResourcesClient() = default;
    /// All pods' devices now, or an error naming the socket (kubelet gone, timeout, bad reply).
    virtual Result<std::vector<PodDevices>> list() = 0;
};

/// The gRPC client lives in a module of its own (gua-kubelet.so, src/alloc/kubelet/), loaded only
/// when a kubelet socket is configured: linking gRPC into gua would map ~60 more shared libraries
/// at every start of every command. Its one entry point returns a new client (never null):
using MakePodResourcesClient = PodResourcesClient*(const char* socket_path,
                                                   std::int64_t timeout_us);
inline constexpr const char* k_make_pod_resources_client = "gua_kubelet_make_client";

/// Where the module is: $GUA_KUBELET_MODULE, else gua-kubelet.so beside the running executable
/// (a build tree), else where the gua-kubelet package installs it relative to the executable's
/// directory (/usr/bin/gua → /usr/lib/<triplet>/gua/gua-kubelet.so).
std::string kubelet_module_path();

/// A gRPC client of `v1.PodResourcesLister/List` on the unix socket `socket_path`, each call
/// bounded by `timeout_us`, from the module at `module_path`. Throws Fatal naming the module when
/// it cannot be loaded.
std::unique_ptr<PodResourcesClient> load_pod_resources_client(const std::string& module_path,
                                                              const std::string& socket_path,
                                                              DurationUs timeout_us);

/// The snapshot a List answer implies: every device id of an NVIDIA GPU resource
/// ("nvidia.com/gpu", "nvidia.com/mig-*") — a "GPU-…" or "MIG-…" uuid, with a time-slicing
/// replica suffix "::N" dropped — allocated to the pod "<namespace>/<pod>" (account: the
/// namespace). A failed List gives an unreadable snapshot.
Snapshot snapshot_of(const Result<std::vector<PodDevices>>& listed);

/// Asks `client` every `period_us` on a thread of its own and records each answer.
class KubeletSource final : public AllocationSource {
  public:
    KubeletSource(std::string describe, std::unique_ptr<PodResourcesClient> client,
                  DurationUs period_us = k_us_per_second, std::function<TimeUs()> clock = wall_now);
    ~KubeletSource() override;
    KubeletSource(const KubeletSource&) = delete;
    KubeletSource& operator=(const KubeletSource&) = delete;

    std::string describe() const override { return m_describe; }
    std::vector<Segment> query(const CardQuery& card, TimeUs begin, TimeUs end) const override;
    void forget_before(TimeUs before) override;
    /// The number of List calls answered or failed so far (tests wait on it).
    std::uint64_t readings() const;

  private:
    void read_once();

    std::string m_describe;
    std::unique_ptr<PodResourcesClient> m_client;
    DurationUs m_period_us;
    std::function<TimeUs()> m_clock;
    mutable std::mutex m_mutex;
    std::condition_variable_any m_wake;
    Timeline m_timeline;
    std::uint64_t m_readings = 0;
    std::jthread m_thread; // last: started after every member above exists
};

} // namespace gua::alloc

/// The module's entry point (src/alloc/kubelet/grpc_client.cpp). gua reaches it only through
/// load_pod_resources_client; the tests and the benchmark, which serve the same .proto themselves,
/// link that file instead (protobuf refuses to register one .proto twice in a process).
extern "C" gua::alloc::PodResourcesClient* gua_kubelet_make_client(const char* socket_path,
                                                                   std::int64_t timeout_us);

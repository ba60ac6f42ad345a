// SPDX-License-Identifier: Apache-2.0
// KubeletSource: pod-resources List answers → snapshots, read once per period.
#include "alloc/kubelet_source.hpp"

#include "core/shared_library.hpp"

#include <cstdlib>
#include <filesystem>

namespace gua::alloc {
namespace {

// Grace after the last answer before the source counts as stalled: three missed periods.
constexpr int k_grace_periods = 3;

bool is_nvidia_gpu_resource(std::string_view resource) {
    return resource == "nvidia.com/gpu" || resource.starts_with("nvidia.com/mig-");
}

} // namespace

std::string kubelet_module_path() {
    if (const char* path = std::getenv("GUA_KUBELET_MODULE"); path != nullptr && *path != 0) {
        return path;
    }
    std::error_code ec;
    const std::filesystem::path bindir =
        std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    const std::filesystem::path beside = bindir / "gua-kubelet.so";
    if (!ec && std::filesystem::exists(beside, ec)) {
        return beside;
    }
    // Installed: the gua-kubelet package's <libdir>/<triplet>/gua, found from <bindir> wherever
    // the tree was installed (the .deb's /usr, `cmake --install`'s prefix).
    return (bindir / GUA_KUBELET_MODULE_FROM_BINDIR).lexically_normal();
}

std::unique_ptr<PodResourcesClient> load_pod_resources_client(const std::string& module_path,
                                                              const std::string& socket_path,
                                                              DurationUs timeout_us) {
    const SharedLibrary& module =
        SharedLibrary::open(module_path, "gua-kubelet", "[allocations] kubelet_socket");
    MakePodResourcesClient* make = nullptr;
    module.bind(make, k_make_pod_resources_client);
    return std::unique_ptr<PodResourcesClient>(make(socket_path.c_str(), timeout_us));
}

Snapshot snapshot_of(const Result<std::vector<PodDevices>>& listed) {
    Snapshot snapshot;
    if (!listed) {
        snapshot.readable = false;
        snapshot.error = listed.error().message;
        return snapshot;
    }
    for (const PodDevices& devices : listed.value()) {
        if (!is_nvidia_gpu_resource(devices.resource)) {
            continue;
        }
        Allocation allocation{AllocationKind::pod, devices.pod_namespace + "/" + devices.pod, "",
                              devices.pod_namespace};
        for (std::string_view id : devices.device_ids) {
            id = id.substr(0, id.find("::")); // time-slicing replicas: "GPU-…::2"
            if (!id.starts_with("GPU-") && !id.starts_with("MIG-")) {
                continue; // an index-named device plugin: gua cannot place it on a card
            }
            DeviceRef device;
            device.uuid = id;
            snapshot.entries.emplace_back(std::move(device), allocation);
        }
    }
    return snapshot;
}

KubeletSource::KubeletSource(std::string describe, std::unique_ptr<PodResourcesClient> client,
                             DurationUs period_us, std::function<TimeUs()> clock)
    : m_describe(std::move(describe)), m_client(std::move(client)), m_period_us(period_us),
      m_clock(std::move(clock)), m_timeline(k_grace_periods * period_us) {
    read_once(); // the first reading exists before the constructor returns
    m_thread = std::jthread([this](std::stop_token stop) {
        while (!stop.stop_requested()) {
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait_for(lock, stop, std::chrono::microseconds(m_period_us),
                                [] { return false; });
            }
            if (!stop.stop_requested()) {
                read_once();
            }
        }
    });
}

KubeletSource::~KubeletSource() {
    m_thread.request_stop();
}

void KubeletSource::read_once() {
    const TimeUs at = m_clock();
    Snapshot snapshot = snapshot_of(m_client->list());
    const std::lock_guard lock(m_mutex);
    m_timeline.record(at, std::move(snapshot));
    ++m_readings;
}

std::vector<Segment> KubeletSource::query(const CardQuery& card, TimeUs begin, TimeUs end) const {
    const std::lock_guard lock(m_mutex);
    return m_timeline.query(card, begin, end);
}

void KubeletSource::forget_before(TimeUs before) {
    const std::lock_guard lock(m_mutex);
    m_timeline.forget_before(before);
}

std::uint64_t KubeletSource::readings() const {
    const std::lock_guard lock(m_mutex);
    return m_readings;
}

} // namespace gua::alloc

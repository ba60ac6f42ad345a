// SPDX-License-Identifier: Apache-2.0
// fault_probe: prints what a real NVIDIA driver answers for faults and fabric — the event API
// (supported types, waits, XID events) and the NVLink/PCIe/row-remap readings — for
// docs/real-driver.md. Not part of gua; built by scripts/real-driver/build.sh.
//
//   fault_probe fabric        per device: PCI id, persistence mode, PCIe link generation and
//                             width (current, maximum), the PCIe replay counter, NVLink state
//                             and error fields (totals and per link), row-remap fields, and the
//                             supported event types
//   fault_probe events SECS   registers every supported event type on every device, then waits
//                             in 500 ms slices for SECS seconds and prints each event and how
//                             each wait ended
#include "nvml/abi.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <map>
#include <vector>

namespace {

using namespace gua::nvml;

void* g_lib = nullptr;

template <typename Fn> Fn* sym(const char* name) {
    return reinterpret_cast<Fn*>(dlsym(g_lib, name));
}

struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;
struct EventData {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
static_assert(sizeof(EventData) == 32);

using InitFn = nvmlReturn_t();
using CountFn = nvmlReturn_t(unsigned int*);
using HandleFn = nvmlReturn_t(unsigned int, nvmlDevice_t*);
using UintFn = nvmlReturn_t(nvmlDevice_t, unsigned int*);
using LinkStateFn = nvmlReturn_t(nvmlDevice_t, unsigned int, unsigned int*);
using FieldsFn = nvmlReturn_t(nvmlDevice_t, int, nvmlFieldValue_t*);
using RemapFn = nvmlReturn_t(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                             unsigned int*);
using PciFn = nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*);
using SupportedFn = nvmlReturn_t(nvmlDevice_t, unsigned long long*);
using SetCreateFn = nvmlReturn_t(nvmlEventSet_t*);
using RegisterFn = nvmlReturn_t(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using WaitFn = nvmlReturn_t(nvmlEventSet_t, EventData*, unsigned int);

constexpr unsigned long long k_all_events = 0xFF9FULL;
constexpr unsigned int k_links = 18;

double now_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

void print_uint(nvmlDevice_t dev, const char* name) {
    auto* fn = sym<UintFn>(name);
    unsigned int v = 0;
    const nvmlReturn_t rc = fn == nullptr ? NVML_ERROR_FUNCTION_NOT_FOUND : fn(dev, &v);
    std::printf("  %s: rc %d value %u\n", name, rc, v);
}

/// One field id at one scope: prints rc, value type and value.
void print_fields(nvmlDevice_t dev, const std::vector<std::pair<unsigned, unsigned>>& ids) {
    auto* get = sym<FieldsFn>("nvmlDeviceGetFieldValues");
    std::vector<nvmlFieldValue_t> v(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        v[i].fieldId = ids[i].first;
        v[i].scopeId = ids[i].second;
    }
    const nvmlReturn_t rc = get(dev, static_cast<int>(v.size()), v.data());
    std::printf("  fields call rc %d\n", rc);
    for (const nvmlFieldValue_t& f : v) {
        std::printf("    field %u scope %u: rc %d type %d value %llu (ts %lld, latency %lld us)\n",
                    f.fieldId, f.scopeId, f.nvmlReturn, f.valueType, f.value.ullVal, f.timestamp,
                    f.latencyUsec);
    }
}

void fabric(nvmlDevice_t dev) {
    nvmlPciInfo_t pci{};
    if (auto* fn = sym<PciFn>("nvmlDeviceGetPciInfo_v3"); fn != nullptr) {
        const nvmlReturn_t rc = fn(dev, &pci);
        std::printf("  pci rc %d busId %s device 0x%08x\n", rc, pci.busId, pci.pciDeviceId);
    }
    for (const char* name :
         {"nvmlDeviceGetPersistenceMode", "nvmlDeviceGetCurrPcieLinkGeneration",
          "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
          "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth",
          "nvmlDeviceGetPcieReplayCounter"}) {
        print_uint(dev, name);
    }
    if (auto* fn = sym<RemapFn>("nvmlDeviceGetRemappedRows"); fn != nullptr) {
        unsigned int cor = 0, unc = 0, pending = 0, failure = 0;
        const nvmlReturn_t rc = fn(dev, &cor, &unc, &pending, &failure);
        std::printf("  nvmlDeviceGetRemappedRows: rc %d cor %u unc %u pending %u failure %u\n", rc,
                    cor, unc, pending, failure);
    }
    auto* state = sym<LinkStateFn>("nvmlDeviceGetNvLinkState");
    for (unsigned int link = 0; state != nullptr && link < k_links; ++link) {
        unsigned int active = 9;
        const nvmlReturn_t rc = state(dev, link, &active);
        std::printf("  nvlink %u state: rc %d active %u\n", link, rc, active);
    }
    std::vector<std::pair<unsigned, unsigned>> ids = {{91, 0},  {38, 0},  {45, 0},  {52, 0},
                                                      {59, 0},  {160, 0}, {94, 0},  {95, 0},
                                                      {142, 0}, {143, 0}, {144, 0}, {145, 0}};
    for (unsigned int link = 0; link < k_links; ++link) {
        for (unsigned int id : {165u, 161u, 162u, 163u, 38u, 52u, 59u, 213u, 214u, 215u}) {
            ids.emplace_back(id, link);
        }
    }
    print_fields(dev, ids);
    unsigned long long types = 0;
    const nvmlReturn_t rc = sym<SupportedFn>("nvmlDeviceGetSupportedEventTypes")(dev, &types);
    std::printf("  supported event types: rc %d mask 0x%llx\n", rc, types);
}

void events(const std::vector<nvmlDevice_t>& devs, int seconds) {
    nvmlEventSet_t set = nullptr;
    std::printf("event set create rc %d\n", sym<SetCreateFn>("nvmlEventSetCreate")(&set));
    for (std::size_t i = 0; i < devs.size(); ++i) {
        unsigned long long types = 0;
        sym<SupportedFn>("nvmlDeviceGetSupportedEventTypes")(devs[i], &types);
        auto* reg = sym<RegisterFn>("nvmlDeviceRegisterEvents");
        std::printf("device %zu register 0x%llx: rc %d; register all 0x%llx: rc %d\n", i,
                    types & k_all_events, reg(devs[i], types & k_all_events, set), k_all_events,
                    reg(devs[i], k_all_events, set));
    }
    auto* wait = sym<WaitFn>("nvmlEventSetWait_v2");
    const double start = now_s();
    std::map<int, int> ends;
    double longest_timeout = 0, shortest_timeout = 1e9;
    while (now_s() - start < seconds) {
        EventData e{};
        const double t0 = now_s();
        const nvmlReturn_t rc = wait(set, &e, 500);
        const double took = now_s() - t0;
        ++ends[rc];
        if (rc == NVML_ERROR_TIMEOUT) {
            longest_timeout = std::max(longest_timeout, took);
            shortest_timeout = std::min(shortest_timeout, took);
            continue;
        }
        timespec rt{};
        clock_gettime(CLOCK_REALTIME, &rt);
        std::size_t index = devs.size();
        for (std::size_t i = 0; i < devs.size(); ++i) {
            index = devs[i] == e.device ? i : index;
        }
        std::printf("t=%.3f (realtime %lld.%03ld) wait rc %d after %.3f s: device %zu type 0x%llx "
                    "data %llu gi 0x%x ci 0x%x\n",
                    now_s() - start, static_cast<long long>(rt.tv_sec), rt.tv_nsec / 1000000, rc,
                    took, index, e.eventType, e.eventData, e.gpuInstanceId, e.computeInstanceId);
        std::fflush(stdout);
    }
    for (const auto& [rc, n] : ends) {
        std::printf("waits ending rc %d: %d\n", rc, n);
    }
    std::printf("timeouts took %.3f..%.3f s\n", shortest_timeout, longest_timeout);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: fault_probe fabric | events SECONDS\n");
        return 2;
    }
    g_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (g_lib == nullptr || sym<InitFn>("nvmlInit_v2")() != NVML_SUCCESS) {
        std::fprintf(stderr, "fault_probe: cannot load or initialise NVML\n");
        return 1;
    }
    unsigned int count = 0;
    sym<CountFn>("nvmlDeviceGetCount_v2")(&count);
    std::vector<nvmlDevice_t> devs(count);
    for (unsigned int i = 0; i < count; ++i) {
        sym<HandleFn>("nvmlDeviceGetHandleByIndex_v2")(i, &devs[i]);
    }
    if (std::strcmp(argv[1], "events") == 0) {
        events(devs, argc > 2 ? std::atoi(argv[2]) : 10);
        return 0;
    }
    for (unsigned int i = 0; i < count; ++i) {
        std::printf("== device %u\n", i);
        fabric(devs[i]);
    }
    return 0;
}

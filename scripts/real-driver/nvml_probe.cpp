// SPDX-License-Identifier: Apache-2.0
// nvml_probe: prints what a real NVIDIA driver does with the calls gua relies on, for
// docs/real-driver.md. Not part of gua; built by scripts/real-driver/build.sh on a machine with
// the project's headers and run where a GPU is. It loads libnvidia-ml.so.1 with dlopen, as gua
// does, and uses the ABI declarations of src/nvml/abi.hpp.
//
//   nvml_probe rings         every sample ring (power, GPU and memory utilization): size, period,
//                            timestamp clock, values; per-process utilization; running processes;
//                            GPM support and one 1-second GPM sample
//   nvml_probe watch SECS    once a second: the new GPU-utilization ring entries since the last
//                            poll (count, values, spacing) and the per-process entries
#include "nvml/abi.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace gua::nvml;

void* g_lib = nullptr;

template <typename Fn> Fn* sym(const char* name) {
    return reinterpret_cast<Fn*>(dlsym(g_lib, name));
}

using InitFn = nvmlReturn_t();
using CountFn = nvmlReturn_t(unsigned int*);
using HandleFn = nvmlReturn_t(unsigned int, nvmlDevice_t*);
using SamplesFn = nvmlReturn_t(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,
                               nvmlValueType_t*, unsigned int*, nvmlSample_t*);
using ProcUtilFn = nvmlReturn_t(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*,
                                unsigned long long);
using ProcsFn = nvmlReturn_t(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
using UtilFn = nvmlReturn_t(nvmlDevice_t, nvmlUtilization_t*);
using StrFn = nvmlReturn_t(char*, unsigned int);
using DevStrFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned int);

struct GpmSupport {
    unsigned int version;
    unsigned int isSupportedDevice;
};
using GpmSample = void*;
struct GpmMetric {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    const char* names[3];
};
struct GpmMetricsGet {
    unsigned int version;
    unsigned int numMetrics;
    GpmSample sample1;
    GpmSample sample2;
    GpmMetric metrics[400]; // more than any header's NVML_GPM_METRIC_MAX (333 in 13.3)
};
using GpmSupportFn = nvmlReturn_t(nvmlDevice_t, GpmSupport*);
using GpmAllocFn = nvmlReturn_t(GpmSample*);
using GpmFreeFn = nvmlReturn_t(GpmSample);
using GpmGetFn = nvmlReturn_t(nvmlDevice_t, GpmSample);
using GpmMetricsFn = nvmlReturn_t(GpmMetricsGet*);

long long now_us(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

double value_of(nvmlValueType_t type, const nvmlValue_t& v) {
    switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
        return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
        return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
        return v.siVal;
    default:
        return v.usVal;
    }
}

// The clock whose "now" is nearest to a driver timestamp, and how far it is.
void print_clock(const char* what, unsigned long long ts) {
    const long long real = now_us(CLOCK_REALTIME);
    const long long mono = now_us(CLOCK_MONOTONIC);
    const long long boot = now_us(CLOCK_BOOTTIME);
    std::printf("  %s timestamp %llu: now - ts = realtime %+.3f s, monotonic %+.3f s, boottime "
                "%+.3f s\n",
                what, ts, (real - static_cast<long long>(ts)) / 1e6,
                (mono - static_cast<long long>(ts)) / 1e6,
                (boot - static_cast<long long>(ts)) / 1e6);
}

std::vector<nvmlSample_t> read_ring(nvmlDevice_t dev, nvmlSamplingType_t type,
                                    unsigned long long last_seen, nvmlValueType_t* vt,
                                    nvmlReturn_t* rc_size, nvmlReturn_t* rc_read) {
    auto* get = sym<SamplesFn>("nvmlDeviceGetSamples");
    unsigned int count = 0;
    *rc_size = get(dev, type, last_seen, vt, &count, nullptr);
    std::vector<nvmlSample_t> out(count + 16);
    unsigned int n = static_cast<unsigned int>(out.size());
    *rc_read = get(dev, type, last_seen, vt, &n, out.data());
    out.resize(*rc_read == NVML_SUCCESS ? n : 0);
    return out;
}

void describe_ring(nvmlDevice_t dev, nvmlSamplingType_t type, const char* name) {
    nvmlValueType_t vt{};
    nvmlReturn_t rc_size{}, rc_read{};
    std::vector<nvmlSample_t> s = read_ring(dev, type, 0, &vt, &rc_size, &rc_read);
    std::printf("ring %s: size query rc %d, read rc %d, %zu entries, value type %d\n", name,
                rc_size, rc_read, s.size(), vt);
    if (s.empty()) {
        return;
    }
    bool sorted =
        std::is_sorted(s.begin(), s.end(), [](const nvmlSample_t& a, const nvmlSample_t& b) {
            return a.timeStamp < b.timeStamp;
        });
    std::vector<nvmlSample_t> by_time = s;
    std::sort(by_time.begin(), by_time.end(), [](const nvmlSample_t& a, const nvmlSample_t& b) {
        return a.timeStamp < b.timeStamp;
    });
    std::vector<long long> gaps;
    for (std::size_t i = 1; i < by_time.size(); ++i) {
        gaps.push_back(static_cast<long long>(by_time[i].timeStamp - by_time[i - 1].timeStamp));
    }
    std::sort(gaps.begin(), gaps.end());
    std::printf("  ring order %s; span %.3f s", sorted ? "time-sorted" : "NOT time-sorted",
                (by_time.back().timeStamp - by_time.front().timeStamp) / 1e6);
    if (!gaps.empty()) {
        std::printf("; gap min %.1f ms, median %.1f ms, max %.1f ms", gaps.front() / 1e3,
                    gaps[gaps.size() / 2] / 1e3, gaps.back() / 1e3);
    }
    std::printf("\n");
    print_clock("newest", by_time.back().timeStamp);
    std::printf("  first entry in ring order ts %llu; values (time order, last 40):",
                s.front().timeStamp);
    for (std::size_t i = by_time.size() > 40 ? by_time.size() - 40 : 0; i < by_time.size(); ++i) {
        std::printf(" %g", value_of(vt, by_time[i].sampleValue));
    }
    std::printf("\n");
    // An entry equal to lastSeen: is it returned again?
    nvmlReturn_t rc2{}, rc3{};
    std::vector<nvmlSample_t> again =
        read_ring(dev, type, by_time.back().timeStamp, &vt, &rc2, &rc3);
    std::printf("  lastSeen = newest: size rc %d, read rc %d, %zu entries\n", rc2, rc3,
                again.size());
}

void describe_processes(nvmlDevice_t dev) {
    auto* putil = sym<ProcUtilFn>("nvmlDeviceGetProcessUtilization");
    if (putil != nullptr) {
        unsigned int count = 0;
        nvmlReturn_t rc = putil(dev, nullptr, &count, 0);
        std::vector<nvmlProcessUtilizationSample_t> p(count + 16);
        unsigned int n = static_cast<unsigned int>(p.size());
        nvmlReturn_t rc2 = putil(dev, p.data(), &n, 0);
        std::printf("process utilization (lastSeen 0): size rc %d count %u, read rc %d, %u "
                    "entries\n",
                    rc, count, rc2, rc2 == NVML_SUCCESS ? n : 0);
        for (unsigned int i = 0; rc2 == NVML_SUCCESS && i < n && i < 40; ++i) {
            std::printf("  pid %u ts %llu sm %u mem %u enc %u dec %u\n", p[i].pid, p[i].timeStamp,
                        p[i].smUtil, p[i].memUtil, p[i].encUtil, p[i].decUtil);
        }
        if (rc2 == NVML_SUCCESS && n > 0) {
            print_clock("process", p[0].timeStamp);
        }
    }
    for (const char* name :
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3"}) {
        auto* procs = sym<ProcsFn>(name);
        if (procs == nullptr) {
            std::printf("%s: absent\n", name);
            continue;
        }
        std::vector<nvmlProcessInfo_v2_t> p(64);
        unsigned int n = 64;
        nvmlReturn_t rc = procs(dev, &n, p.data());
        std::printf("%s: rc %d, %u processes\n", name, rc, rc == NVML_SUCCESS ? n : 0);
        for (unsigned int i = 0; rc == NVML_SUCCESS && i < n; ++i) {
            std::printf("  pid %u used %.1f MiB gi %u ci %u\n", p[i].pid,
                        p[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL
                            ? -1.0
                            : p[i].usedGpuMemory / 1048576.0,
                        p[i].gpuInstanceId, p[i].computeInstanceId);
        }
    }
}

void describe_gpm(nvmlDevice_t dev) {
    auto* support = sym<GpmSupportFn>("nvmlGpmQueryDeviceSupport");
    if (support == nullptr) {
        std::printf("gpm: nvmlGpmQueryDeviceSupport absent\n");
        return;
    }
    GpmSupport s{1, 0};
    nvmlReturn_t rc = support(dev, &s);
    std::printf("gpm: support rc %d, isSupportedDevice %u\n", rc, s.isSupportedDevice);
    if (rc != NVML_SUCCESS || s.isSupportedDevice == 0) {
        return;
    }
    auto* alloc = sym<GpmAllocFn>("nvmlGpmSampleAlloc");
    auto* free_fn = sym<GpmFreeFn>("nvmlGpmSampleFree");
    auto* get = sym<GpmGetFn>("nvmlGpmSampleGet");
    auto* metrics = sym<GpmMetricsFn>("nvmlGpmMetricsGet");
    GpmSample a = nullptr, b = nullptr;
    alloc(&a);
    alloc(&b);
    nvmlReturn_t r1 = get(dev, a);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    nvmlReturn_t r2 = get(dev, b);
    static GpmMetricsGet m{};
    std::memset(&m, 0, sizeof m);
    m.version = 1;
    const unsigned int ids[] = {1, 2, 3, 4, 5, 7, 10, 11, 12, 13, 20, 21};
    for (unsigned int id : ids) {
        m.metrics[m.numMetrics++].metricId = id;
    }
    m.sample1 = a;
    m.sample2 = b;
    nvmlReturn_t r3 = metrics(&m);
    std::printf("gpm over 1 s: sample rc %d/%d, metrics rc %d:", r1, r2, r3);
    for (unsigned int i = 0; i < m.numMetrics; ++i) {
        std::printf(" %u=%s%.2f", m.metrics[i].metricId, m.metrics[i].nvmlReturn == 0 ? "" : "!",
                    m.metrics[i].nvmlReturn == 0 ? m.metrics[i].value
                                                 : static_cast<double>(m.metrics[i].nvmlReturn));
    }
    std::printf("\n");
    free_fn(a);
    free_fn(b);
}

void watch(nvmlDevice_t dev, int seconds) {
    auto* util = sym<UtilFn>("nvmlDeviceGetUtilizationRates");
    auto* putil = sym<ProcUtilFn>("nvmlDeviceGetProcessUtilization");
    unsigned long long cursor = 0, pcursor = 0;
    nvmlValueType_t vt{};
    nvmlReturn_t rc1{}, rc2{};
    // Seed the cursor with the ring's newest entry so that each line shows only new entries.
    for (const nvmlSample_t& e : read_ring(dev, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &rc1, &rc2)) {
        cursor = std::max(cursor, e.timeStamp);
    }
    pcursor = static_cast<unsigned long long>(now_us(CLOCK_REALTIME));
    const long long start = now_us(CLOCK_REALTIME);
    for (int i = 0; i < seconds; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        std::vector<nvmlSample_t> s =
            read_ring(dev, NVML_GPU_UTILIZATION_SAMPLES, cursor, &vt, &rc1, &rc2);
        std::sort(s.begin(), s.end(), [](const nvmlSample_t& a, const nvmlSample_t& b) {
            return a.timeStamp < b.timeStamp;
        });
        nvmlUtilization_t u{};
        nvmlReturn_t urc = util(dev, &u);
        std::printf("t=%6.1f util rc %d gpu %u mem %u | ring rc %d/%d new %zu:",
                    (now_us(CLOCK_REALTIME) - start) / 1e6, urc, u.gpu, u.memory, rc1, rc2,
                    s.size());
        unsigned long long prev = cursor != 0 || s.empty() ? cursor : s.front().timeStamp;
        for (const nvmlSample_t& e : s) {
            std::printf(" %g@+%.0fms", value_of(vt, e.sampleValue), (e.timeStamp - prev) / 1e3);
            prev = e.timeStamp;
        }
        if (!s.empty()) {
            cursor = s.back().timeStamp;
        }
        if (putil != nullptr) {
            std::vector<nvmlProcessUtilizationSample_t> p(64);
            unsigned int n = 64;
            nvmlReturn_t prc = putil(dev, p.data(), &n, pcursor);
            std::printf(" | proc rc %d n %u:", prc, prc == NVML_SUCCESS ? n : 0);
            for (unsigned int k = 0; prc == NVML_SUCCESS && k < n; ++k) {
                std::printf(" %u:sm%u/mem%u", p[k].pid, p[k].smUtil, p[k].memUtil);
                pcursor = std::max(pcursor, p[k].timeStamp);
            }
        }
        std::printf("\n");
        std::fflush(stdout);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: nvml_probe rings | watch SECONDS\n");
        return 2;
    }
    g_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (g_lib == nullptr) {
        std::fprintf(stderr, "nvml_probe: %s\n", dlerror());
        return 1;
    }
    if (nvmlReturn_t rc = sym<InitFn>("nvmlInit_v2")(); rc != NVML_SUCCESS) {
        std::fprintf(stderr, "nvml_probe: nvmlInit_v2 returned %d\n", rc);
        return 1;
    }
    char version[96] = {};
    sym<StrFn>("nvmlSystemGetDriverVersion")(version, sizeof version);
    unsigned int count = 0;
    sym<CountFn>("nvmlDeviceGetCount_v2")(&count);
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        sym<HandleFn>("nvmlDeviceGetHandleByIndex_v2")(i, &dev);
        char name[96] = {};
        sym<DevStrFn>("nvmlDeviceGetName")(dev, name, sizeof name);
        std::printf("== device %u: %s, driver %s\n", i, name, version);
        if (std::strcmp(argv[1], "watch") == 0) {
            watch(dev, argc > 2 ? std::atoi(argv[2]) : 10);
            continue;
        }
        describe_ring(dev, NVML_TOTAL_POWER_SAMPLES, "power");
        describe_ring(dev, NVML_GPU_UTILIZATION_SAMPLES, "gpu-util");
        describe_ring(dev, NVML_MEMORY_UTILIZATION_SAMPLES, "mem-util");
        describe_processes(dev);
        describe_gpm(dev);
    }
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// GPM (Hopper and newer) of the modern and R535 variants of the fake library: support query,
// sample allocation, whole-GPU and per-MIG-instance samples, and nvmlGpmMetricsGet computing each
// metric as the mean of its scenario series between the two samples. Also
// nvmlDeviceGetGpuInstanceId, which names the instance nvmlGpmMigSampleGet takes.
#include "api.hpp"

#include <algorithm>
#include <cstring>

using namespace gua::fake_nvml;

namespace {

char k_short_name[] = "metric";
char k_long_name[] = "fake GPM metric";
char k_unit[] = "%";

/// The series of `metric` for a sample of `device` (or of its MIG instance `mig`); nullptr when
/// the scenario has none (the metric then reads 0 %).
const Series* metric_series(const Device& device, int mig, unsigned int metric) {
    const std::map<unsigned int, Series>& all =
        mig < 0 ? device.gpm.metrics
                : device.mig_instances[static_cast<std::size_t>(mig)].gpm_metrics;
    const auto it = all.find(metric);
    return it == all.end() ? nullptr : &it->second;
}

nvmlReturn_t take_sample(GpmSample& sample, std::size_t device, int mig) {
    sample.taken = true;
    sample.device = device;
    sample.mig = mig;
    sample.t = drv().now();
    return NVML_SUCCESS;
}

} // namespace

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int* id) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig < 0 || id == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *id = d.mig_instances[static_cast<std::size_t>(handle.mig)].gpu_instance_id;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t* support) {
    return device_call(__func__, h, [&](const Handle&, const Device& d) {
        if (support == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (support->version != NVML_GPM_SUPPORT_VERSION) {
            return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        }
        support->isSupportedDevice = d.gpm.supported ? 1 : 0;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (sample == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *sample = drv().gpm_alloc();
    return NVML_SUCCESS;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    return drv().gpm_free(sample) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t sample) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        GpmSample* s = drv().gpm_sample(sample);
        if (s == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (!d.gpm.supported) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        return take_sample(*s, handle.device, handle.mig);
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t h, unsigned int gpu_instance_id,
                                                 nvmlGpmSample_t sample) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        GpmSample* s = drv().gpm_sample(sample);
        if (s == nullptr || handle.mig >= 0) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (!d.gpm.supported) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (!d.mig) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const auto it =
            std::find_if(d.mig_instances.begin(), d.mig_instances.end(), [&](const MigInstance& m) {
                return m.gpu_instance_id == gpu_instance_id;
            });
        if (it == d.mig_instances.end()) {
            return NVML_ERROR_NOT_FOUND;
        }
        return take_sample(*s, handle.device, static_cast<int>(it - d.mig_instances.begin()));
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* request) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (request == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (request->version != NVML_GPM_METRICS_GET_VERSION) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    const GpmSample* first = drv().gpm_sample(request->sample1);
    const GpmSample* second = drv().gpm_sample(request->sample2);
    if (first == nullptr || second == nullptr || !first->taken || !second->taken ||
        first->device != second->device || first->mig != second->mig || second->t <= first->t) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const Device& d = drv().scenario().devices[first->device];
    if (request->numMetrics > d.gpm.metric_max) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (const auto rc = drv().fault("nvmlGpmMetricsGet", first->device)) {
        return *rc;
    }
    for (unsigned int i = 0; i < request->numMetrics; ++i) {
        nvmlGpmMetric_t& m = request->metrics[i];
        const bool unsupported =
            std::find(d.gpm.unsupported_metrics.begin(), d.gpm.unsupported_metrics.end(),
                      m.metricId) != d.gpm.unsupported_metrics.end();
        const Series* s = metric_series(d, first->mig, m.metricId);
        m.nvmlReturn = unsupported ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
        m.value = unsupported || s == nullptr ? 0.0 : s->mean(first->t, second->t);
        m.metricInfo.shortName = k_short_name;
        m.metricInfo.longName = k_long_name;
        m.metricInfo.unit = k_unit;
    }
    // A driver built with a header of metric_max entries may clear its whole array: a caller
    // that allocated fewer entries is written past its struct (AddressSanitizer reports it).
    std::memset(static_cast<void*>(&request->metrics[request->numMetrics]), 0,
                sizeof(nvmlGpmMetric_t) * (d.gpm.metric_max - request->numMetrics));
    return NVML_SUCCESS;
}

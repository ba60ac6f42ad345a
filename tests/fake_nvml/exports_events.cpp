// SPDX-License-Identifier: Apache-2.0
// The fake's NVML event API (nvmlEventSetCreate … nvmlEventSetWait_v2), in the modern and R535
// variants only: pre-R450 drivers lack nvmlEventSetWait_v2.
#include "api.hpp"

#include <chrono>
#include <thread>

using namespace gua::fake_nvml;

GUA_FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (set == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *set = drv().event_set_create();
    return NVML_SUCCESS;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    return drv().event_set_free(set) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t h,
                                                              unsigned long long* types) {
    return device_call(__func__, h, [&](const Handle&, const Device& d) {
        if (types == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *types = d.supported_event_types;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t h, unsigned long long types,
                                                      nvmlEventSet_t set) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        EventSet* s = drv().event_set(set);
        if (s == nullptr || (types & ~nvmlEventTypeAll) != 0) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (handle.mig >= 0 || (types & ~d.supported_event_types) != 0) {
            return NVML_ERROR_NOT_SUPPORTED; // MIG handles cannot register (NVML's rule)
        }
        s->registrations.push_back({handle.device, types, drv().now()});
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                 unsigned int timeoutms) {
    if (data == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutms);
    while (true) {
        {
            std::lock_guard lock(drv().lock());
            if (!drv().initialized()) {
                return NVML_ERROR_UNINITIALIZED;
            }
            EventSet* s = drv().event_set(set);
            if (s == nullptr) {
                return NVML_ERROR_INVALID_ARGUMENT;
            }
            drv().emit_kmsg();
            if (const auto rc = drv().next_event(*s, *data)) {
                return *rc;
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            return NVML_ERROR_TIMEOUT;
        }
        // Not holding the driver's lock while sleeping: the sampler's calls go on meanwhile.
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            deadline - now, std::chrono::milliseconds(10)));
    }
}

// SPDX-License-Identifier: Apache-2.0
// The exported NVML C API every variant of the fake libnvidia-ml.so.1 has: the unversioned
// (pre-R450) names. exports_modern.cpp adds the versioned and newer names to the other variants.
#include "api.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

using namespace gua::fake_nvml;

namespace {

#if defined(GUA_FAKE_NVML_R535)
constexpr const char* k_default_driver = "535.54.03";
#elif defined(GUA_FAKE_NVML_LEGACY)
constexpr const char* k_default_driver = "418.226.00";
#else
constexpr const char* k_default_driver = "560.35.05";
#endif
constexpr std::size_t k_v1_stride = sizeof(nvmlProcessInfo_v1_t);

/// nvmlErrorString texts for codes 0..30 (NVIDIA's wording); anything else is "Unknown Error".
constexpr std::array<const char*, 31> k_error_texts = {
    "Success",
    "Uninitialized",
    "Invalid Argument",
    "Not Supported",
    "Insufficient Permissions",
    "Already Initialized",
    "Not Found",
    "Insufficient Size",
    "Insufficient External Power",
    "Driver Not Loaded",
    "Timeout",
    "Interrupt request issue",
    "NVML Shared Library Not Found",
    "Function Not Found",
    "Corrupted infoROM",
    "GPU is lost",
    "GPU requires restart",
    "The operating system has blocked the request.",
    "RM has detected an NVML/RM version mismatch.",
    "In use by another client",
    "Insufficient Memory",
    "No data",
    "The requested vgpu operation is not available on target device, because ECC is enabled",
    "Ran out of critical resources, other than memory",
    "The requested frequency is not supported",
    "The provided version is invalid/unsupported",
    "The requested functionality has been deprecated",
    "The system is not ready for the request",
    "No GPUs were found",
    "Resource not in correct state to perform requested operation",
    "Reset type not supported",
};

std::string driver_version() {
    const std::string& version = drv().scenario().driver_version;
    return version.empty() ? k_default_driver : version;
}

} // namespace

GUA_FAKE_EXPORT nvmlReturn_t nvmlInit() {
    std::lock_guard lock(drv().lock());
    return drv().init();
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlShutdown() {
    std::lock_guard lock(drv().lock());
    return drv().shutdown();
}

GUA_FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
    const auto code = static_cast<std::size_t>(rc);
    return code < k_error_texts.size() ? k_error_texts[code] : "Unknown Error";
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    std::lock_guard lock(drv().lock());
    return drv().initialized() ? copy_string(driver_version(), version, length)
                               : NVML_ERROR_UNINITIALIZED;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
    return count_devices(count, true);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
    return handle_by_index(__func__, index, device, true);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int length) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        return copy_string(
            handle.mig < 0 ? d.uuid : d.mig_instances[static_cast<std::size_t>(handle.mig)].uuid,
            uuid, length);
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* name, unsigned int length) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        return copy_string(
            handle.mig < 0 ? d.name : d.mig_instances[static_cast<std::size_t>(handle.mig)].name,
            name, length);
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t h, void* pci) {
    return pci_info(__func__, h, pci, true);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* memory) {
    return memory_info(__func__, h, nullptr, memory);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h,
                                                           nvmlUtilization_t* utilization) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || d.mig) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (utilization == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        utilization->gpu = drv().snapshot_util(handle.device);
        utilization->memory = static_cast<unsigned int>(std::lround(d.mem_util.at(drv().now())));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t h,
                                                                  unsigned int* count,
                                                                  void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::compute, k_v1_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t h,
                                                                   unsigned int* count,
                                                                   void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::graphics, k_v1_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int* power_mw) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        *power_mw = static_cast<unsigned int>(std::lround(d.power_mw.at(drv().now())));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h,
                                                      nvmlTemperatureSensors_t sensor,
                                                      unsigned int* celsius) {
    int value = 0;
    if (sensor != NVML_TEMPERATURE_GPU || celsius == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const nvmlReturn_t rc = temperature(__func__, h, &value);
    *celsius = static_cast<unsigned int>(std::max(value, 0));
    return rc;
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type,
                                                    unsigned int* mhz) {
    return device_call(__func__, h, [&](const Handle&, const Device& d) {
        if (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        *mhz = static_cast<unsigned int>(std::lround(d.sm_clock_mhz.at(drv().now())));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int* mw) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (mw == nullptr || handle.mig >= 0) {
            return mw == nullptr ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
        }
        *mw = static_cast<unsigned int>(std::lround(d.power_limit_mw.at(drv().now())));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, nvmlClockType_t type,
                                                       unsigned int* mhz) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (mhz == nullptr || handle.mig >= 0) {
            return mhz == nullptr ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
        }
        if (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        *mhz = static_cast<unsigned int>(std::lround(d.max_sm_clock_mhz.at(drv().now())));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h,
                                                                       unsigned long long* bits) {
    return clock_reasons(__func__, h, bits);
}

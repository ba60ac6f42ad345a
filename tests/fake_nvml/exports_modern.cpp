// SPDX-License-Identifier: Apache-2.0
// The versioned and newer NVML names of the modern and R535 variants of the fake library:
// _v2/_v3 enumeration and process lists, MemoryInfo_v2, sample rings, per-process utilization,
// energy, TemperatureV, clocks event reasons and MIG. Not built into the legacy variant.
#include "api.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace gua::fake_nvml;

namespace {

#if defined(GUA_FAKE_NVML_R535)
constexpr std::size_t k_variant_v3_stride = sizeof(nvmlProcessDetail_v1_t);
#else
constexpr std::size_t k_variant_v3_stride = sizeof(nvmlProcessInfo_v2_t);
#endif
constexpr std::size_t k_v2_stride = sizeof(nvmlProcessInfo_v2_t);
constexpr std::size_t k_v1_stride = sizeof(nvmlProcessInfo_v1_t);
constexpr unsigned int k_max_mig_devices = 7;
constexpr unsigned int k_junk_pid = 999999;

std::size_t v3_stride() {
    const std::size_t stride = drv().scenario().process_info_stride;
    return stride != 0 ? stride : k_variant_v3_stride;
}

nvmlReturn_t list_v3(const char* function, nvmlDevice_t h, unsigned int* count, void* infos,
                     ProcessKind kind) {
    std::size_t stride = 0;
    {
        std::lock_guard lock(drv().lock());
        stride = v3_stride();
    }
    return process_list(function, h, count, infos, kind, stride);
}

} // namespace

GUA_FAKE_EXPORT nvmlReturn_t nvmlInit_v2() {
    std::lock_guard lock(drv().lock());
    return drv().init();
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    return count_devices(count, false);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                           nvmlDevice_t* device) {
    return handle_by_index(__func__, index, device, false);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t h, nvmlPciInfo_t* pci) {
    return pci_info(__func__, h, pci, false);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t* pci) {
    return pci_info(__func__, h, pci, false);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t* memory) {
    if (memory == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    return memory_info(__func__, h, memory, nullptr);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t h, nvmlSamplingType_t type,
                                                  unsigned long long last_seen,
                                                  nvmlValueType_t* value_type, unsigned int* count,
                                                  nvmlSample_t* samples) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || d.mig || type != NVML_GPU_UTILIZATION_SAMPLES) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (count == nullptr || value_type == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const auto ring = drv().ring(handle.device, last_seen);
        if (ring.empty()) {
            return NVML_ERROR_NOT_FOUND;
        }
        *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
        if (samples == nullptr) {
            *count = static_cast<unsigned int>(ring.size());
            return NVML_SUCCESS;
        }
        if (*count == 0) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const std::size_t written = std::min<std::size_t>(*count, ring.size());
        for (std::size_t i = 0; i < written; ++i) {
            samples[i].timeStamp = ring[i].timestamp_us;
            if (d.dirty_upper_bytes) {
                samples[i].sampleValue.ullVal = 0xDEADBEEF00000000ULL;
            }
            samples[i].sampleValue.uiVal = static_cast<unsigned int>(ring[i].value);
        }
        *count = static_cast<unsigned int>(written);
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetProcessUtilization(nvmlDevice_t h, nvmlProcessUtilizationSample_t* utilization,
                                unsigned int* count, unsigned long long last_seen) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || d.mig) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (count == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        auto entries = drv().process_util(handle.device, last_seen);
        if (entries.empty()) {
            return NVML_ERROR_NOT_FOUND;
        }
        if (d.process_util_junk) {
            const auto newest =
                std::max_element(entries.begin(), entries.end(), [](auto& a, auto& b) {
                    return a.timestamp_us < b.timestamp_us;
                })->timestamp_us;
            entries.push_back({k_junk_pid, newest, 50});
            entries.push_back({entries.front().pid, newest + 1, 250});
            entries.push_back({0, 0, 0});
        }
        const auto needed = static_cast<unsigned int>(entries.size());
        // With process_util_size set, a buffer smaller than it is refused even when fewer
        // entries would fit, as driver 580.159.04 does with its 72-entry table.
        if (utilization == nullptr || *count < needed || *count < d.process_util_size) {
            *count = d.process_util_size != 0 ? std::max(d.process_util_size, needed) : needed;
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        for (std::size_t i = 0; i < entries.size(); ++i) {
            utilization[i] = {entries[i].pid, entries[i].timestamp_us, entries[i].sm_util, 0, 0, 0};
        }
        *count = needed;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t h,
                                                                     unsigned int* count,
                                                                     void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::compute, k_v2_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h,
                                                                     unsigned int* count,
                                                                     void* infos) {
    return list_v3(__func__, h, count, infos, ProcessKind::compute);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t h,
                                                                      unsigned int* count,
                                                                      void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::graphics, k_v2_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t h,
                                                                      unsigned int* count,
                                                                      void* infos) {
    return list_v3(__func__, h, count, infos, ProcessKind::graphics);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t h,
                                                                     unsigned int* count,
                                                                     void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::mps, k_v1_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t h,
                                                                        unsigned int* count,
                                                                        void* infos) {
    return process_list(__func__, h, count, infos, ProcessKind::mps, k_v2_stride);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t h,
                                                                        unsigned int* count,
                                                                        void* infos) {
    return list_v3(__func__, h, count, infos, ProcessKind::mps);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h,
                                                                 unsigned long long* energy_mj) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        const double mj = d.energy_start_mj + d.power_mw.integral(0, drv().now());
        *energy_mj = static_cast<unsigned long long>(std::llround(mj));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t h,
                                                       nvmlTemperature_v1_t* reading) {
    if (reading == nullptr || reading->sensorType != NVML_TEMPERATURE_GPU) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (reading->version != nvmlTemperature_v1) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    return temperature(__func__, h, &reading->temperature);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h,
                                                                    unsigned long long* bits) {
    return clock_reasons(__func__, h, bits);
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count,
                                                      nvmlFieldValue_t* values) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (count < 0 || (count > 0 && values == nullptr)) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const double now = drv().now();
        const auto series_of = [&](unsigned int id) -> const Series* {
            switch (id) {
            case NVML_FI_DEV_MEMORY_TEMP:
                return &d.memory_temperature_c;
            case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
                return &d.ecc_uncorrected;
            case NVML_FI_DEV_REMAPPED_COR:
                return &d.remapped_rows_correctable;
            case NVML_FI_DEV_REMAPPED_UNC:
                return &d.remapped_rows_uncorrectable;
            case NVML_FI_DEV_REMAPPED_PENDING:
                return &d.remap_pending;
            case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
                return &d.pcie_replays;
            case NVML_FI_DEV_REMAPPED_FAILURE:
                return &d.remap_failure;
            // The totals over all links: link 0's series (the other links count none).
            case NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
                return d.nvlink_links > 0 ? &d.nvlink_replay : nullptr;
            case NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
                return d.nvlink_links > 0 ? &d.nvlink_recovery : nullptr;
            case NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
                return d.nvlink_links > 0 ? &d.nvlink_crc : nullptr;
            default:
                return nullptr;
            }
        };
        // SUCCESS for the call; each value says for itself (as the driver does).
        for (int i = 0; i < count; ++i) {
            nvmlFieldValue_t& v = values[i];
            const Series* s = handle.mig < 0 ? series_of(v.fieldId) : nullptr;
            const bool unsupported =
                s == nullptr || std::find(d.unsupported_fields.begin(), d.unsupported_fields.end(),
                                          v.fieldId) != d.unsupported_fields.end();
            v.timestamp = static_cast<long long>(now * 1e6);
            v.latencyUsec = 0;
            v.nvmlReturn = unsupported ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
            if (!unsupported) {
                // Temperatures are unsigned ints; counters unsigned long longs, as NVIDIA's.
                if (v.fieldId == NVML_FI_DEV_MEMORY_TEMP) {
                    v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                    v.value.uiVal = static_cast<unsigned int>(std::lround(s->at(now)));
                } else {
                    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
                    v.value.ullVal = static_cast<unsigned long long>(std::llround(s->at(now)));
                }
            }
        }
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int* current,
                                                  unsigned int* pending) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || current == nullptr || pending == nullptr) {
            return handle.mig >= 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
        }
        *current = *pending = d.mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int* count) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || count == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *count = d.mig ? k_max_mig_devices : 0;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int index,
                                                                 nvmlDevice_t* mig) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0 || !d.mig || mig == nullptr || index >= k_max_mig_devices) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (index >= d.mig_instances.size()) {
            return NVML_ERROR_NOT_FOUND;
        }
        *mig = drv().handle_of(handle.device, static_cast<int>(index));
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t, void*) {
    return NVML_ERROR_NOT_SUPPORTED;
}

#if !defined(GUA_FAKE_NVML_R535)
GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t, void*) {
    return NVML_ERROR_NOT_SUPPORTED;
}
#endif

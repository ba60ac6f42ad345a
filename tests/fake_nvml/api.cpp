// SPDX-License-Identifier: Apache-2.0
// Shared implementations behind the fake's exported functions (see exports.cpp).
#include "api.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace gua::fake_nvml {
namespace {

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;

/// The pre-R450 nvmlPciInfo_t (52 bytes): only busId[16] shares the modern layout.
struct PciInfoV1 {
    char busId[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId, reserved[4];
};

unsigned long long to_bytes(double mib) {
    return static_cast<unsigned long long>(std::llround(std::max(mib, 0.0) * k_bytes_per_mib));
}

double total_mib(const Handle& h, const Device& d) {
    return h.mig < 0 ? d.memory_total_mib
                     : d.mig_instances[static_cast<std::size_t>(h.mig)].memory_total_mib;
}

} // namespace

nvmlReturn_t copy_string(const std::string& text, char* out, unsigned int length) {
    if (out == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (length < text.size() + 1) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    std::memcpy(out, text.c_str(), text.size() + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t count_devices(unsigned int* count, bool skip_forbidden) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (count == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const auto& devices = drv().scenario().devices;
    const double now = drv().now();
    *count = static_cast<unsigned int>(std::count_if(devices.begin(), devices.end(), [&](auto& d) {
        return (!skip_forbidden || !d.no_permission) && d.present_from <= now;
    }));
    return NVML_SUCCESS;
}

nvmlReturn_t handle_by_index(const char* function, unsigned int index, nvmlDevice_t* device,
                             bool skip_forbidden) {
    std::lock_guard lock(drv().lock());
    if (!drv().initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    const auto& devices = drv().scenario().devices;
    std::size_t position = 0;
    for (; position < devices.size(); ++position) {
        if (skip_forbidden && devices[position].no_permission) {
            ++index;
        } else if (position == index) {
            break;
        }
    }
    if (device == nullptr || position >= devices.size() ||
        devices[position].present_from > drv().now()) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (const auto rc = drv().fault(function, position)) {
        return *rc;
    }
    if (devices[position].no_permission) {
        return NVML_ERROR_NO_PERMISSION;
    }
    *device = drv().handle_of(position);
    return NVML_SUCCESS;
}

nvmlReturn_t process_list(const char* function, nvmlDevice_t h, unsigned int* count, void* infos,
                          ProcessKind kind, std::size_t stride) {
    return device_call(function, h, [&](const Handle& handle, const Device& d) {
        if (count == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const std::vector<const Process*>& entries = drv().processes(handle, kind);
        const auto needed = static_cast<unsigned int>(entries.size());
        if (kind == ProcessKind::compute && infos != nullptr) {
            if (const unsigned int extra = drv().take_growth(handle.device); extra > 0) {
                *count = needed + extra;
                return NVML_ERROR_INSUFFICIENT_SIZE;
            }
        }
        if (needed == 0) {
            *count = 0;
            return NVML_SUCCESS;
        }
        if (infos == nullptr || *count < needed) {
            *count = needed;
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        const double t = drv().now();
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const auto& p = *entries[i];
            nvmlProcessDetail_v1_t entry{p.pid, to_bytes(p.memory_mib.at(t)), NVML_INSTANCE_ID_NONE,
                                         NVML_INSTANCE_ID_NONE, 0};
            if (p.mig_instance >= 0) {
                const auto& instance = d.mig_instances.at(static_cast<std::size_t>(p.mig_instance));
                entry.gpuInstanceId = instance.gpu_instance_id;
                entry.computeInstanceId = instance.compute_instance_id;
            }
            std::memcpy(static_cast<std::byte*>(infos) + i * stride, &entry, stride);
        }
        *count = needed;
        return NVML_SUCCESS;
    });
}

nvmlReturn_t pci_info(const char* function, nvmlDevice_t h, void* out, bool legacy) {
    return device_call(function, h, [&](const Handle&, const Device& d) {
        if (out == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const std::string full = d.pci_bus_id;
        const std::string short_form = full.size() > 4 ? full.substr(4) : full;
        unsigned int domain = 0;
        unsigned int bus = 0;
        unsigned int device = 0;
        std::sscanf(full.c_str(), "%x:%x:%x", &domain, &bus, &device);
        if (legacy) {
            PciInfoV1 pci{};
            std::strncpy(pci.busId, short_form.c_str(), sizeof(pci.busId) - 1);
            pci.domain = domain;
            pci.bus = bus;
            pci.device = device;
            std::memcpy(out, &pci, sizeof(pci));
            return NVML_SUCCESS;
        }
        nvmlPciInfo_t pci{};
        std::strncpy(pci.busIdLegacy, short_form.c_str(), sizeof(pci.busIdLegacy) - 1);
        std::strncpy(pci.busId, full.c_str(), sizeof(pci.busId) - 1);
        pci.domain = domain;
        pci.bus = bus;
        pci.device = device;
        pci.pciDeviceId = 0x233010DE;
        std::memcpy(out, &pci, sizeof(pci));
        return NVML_SUCCESS;
    });
}

nvmlReturn_t memory_info(const char* function, nvmlDevice_t h, nvmlMemory_v2_t* v2,
                         nvmlMemory_t* v1) {
    return device_call(function, h, [&](const Handle& handle, const Device& d) {
        const double total = total_mib(handle, d);
        const double reserved = handle.mig < 0 ? d.memory_reserved_mib : 0.0;
        const double used = drv().used_mib(handle);
        const double free = std::max(total - reserved - used, 0.0);
        if (v2 != nullptr) {
            if (v2->version != nvmlMemory_v2) {
                return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
            }
            v2->total = to_bytes(total);
            v2->reserved = to_bytes(reserved);
            v2->used = to_bytes(used);
            v2->free = to_bytes(free);
            return NVML_SUCCESS;
        }
        if (v1 == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        *v1 = {to_bytes(total), to_bytes(free), to_bytes(used + reserved)};
        return NVML_SUCCESS;
    });
}

nvmlReturn_t temperature(const char* function, nvmlDevice_t h, int* out) {
    return device_call(function, h, [&](const Handle& handle, const Device& d) {
        if (handle.mig >= 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        *out = static_cast<int>(std::lround(d.temperature_c.at(drv().now())));
        return NVML_SUCCESS;
    });
}

nvmlReturn_t clock_reasons(const char* function, nvmlDevice_t h, unsigned long long* reasons) {
    return device_call(function, h, [&](const Handle& handle, const Device& d) {
        if (reasons == nullptr || handle.mig >= 0) {
            return reasons == nullptr ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
        }
        *reasons =
            static_cast<unsigned long long>(std::llround(d.clock_event_reasons.at(drv().now())));
        return NVML_SUCCESS;
    });
}

} // namespace gua::fake_nvml

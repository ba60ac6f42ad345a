// SPDX-License-Identifier: Apache-2.0
// The fake's PCIe link, persistence mode and NVLink calls (modern and R535 variants), from the
// scenario's "pcie", "persistence_mode" and "nvlink" keys.
#include "api.hpp"

#include <algorithm>
#include <cmath>

using namespace gua::fake_nvml;

namespace {

nvmlReturn_t uint_reading(const char* function, nvmlDevice_t h, unsigned int* out,
                          unsigned int (*of)(const Device&, double)) {
    return device_call(function, h, [&](const Handle& handle, const Device& d) {
        if (out == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (handle.mig >= 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        *out = of(d, drv().now());
        return NVML_SUCCESS;
    });
}

unsigned int rounded(const Series& s, double t) {
    return static_cast<unsigned int>(std::lround(std::max(s.at(t), 0.0)));
}

} // namespace

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t h, unsigned int* v) {
    return uint_reading(__func__, h, v,
                        [](const Device& d, double t) { return rounded(d.pcie_gen, t); });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t h, unsigned int* v) {
    return uint_reading(__func__, h, v, [](const Device& d, double) { return d.pcie_gen_max; });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t h, unsigned int* v) {
    return uint_reading(__func__, h, v,
                        [](const Device& d, double t) { return rounded(d.pcie_width, t); });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t h, unsigned int* v) {
    return uint_reading(__func__, h, v, [](const Device& d, double) { return d.pcie_width_max; });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t h, unsigned int* mode) {
    return uint_reading(__func__, h, mode,
                        [](const Device& d, double) { return d.persistence_mode; });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int link,
                                                      unsigned int* active) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (active == nullptr) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (handle.mig >= 0 || d.nvlink_links == 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (link >= d.nvlink_links) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const double now = drv().now();
        const bool down =
            std::find(d.nvlink_down.begin(), d.nvlink_down.end(), link) != d.nvlink_down.end() ||
            std::any_of(d.nvlink_down_at.begin(), d.nvlink_down_at.end(),
                        [&](const auto& at) { return at.first == link && now >= at.second; });
        *active = down ? 0 : 1;
        return NVML_SUCCESS;
    });
}

GUA_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t h, unsigned int link,
                                                             nvmlNvLinkErrorCounter_t counter,
                                                             unsigned long long* value) {
    return device_call(__func__, h, [&](const Handle& handle, const Device& d) {
        if (value == nullptr || counter < 0 || counter > 4) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (handle.mig >= 0 || d.nvlink_links == 0) {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        if (link >= d.nvlink_links) {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        const Series* s = counter == NVML_NVLINK_ERROR_DL_REPLAY     ? &d.nvlink_replay
                          : counter == NVML_NVLINK_ERROR_DL_RECOVERY ? &d.nvlink_recovery
                          : counter == NVML_NVLINK_ERROR_DL_CRC_FLIT ? &d.nvlink_crc
                                                                     : nullptr;
        const double now = drv().now();
        *value = link == 0 && s != nullptr
                     ? static_cast<unsigned long long>(std::llround(std::max(s->at(now), 0.0)))
                     : 0ULL;
        return NVML_SUCCESS;
    });
}

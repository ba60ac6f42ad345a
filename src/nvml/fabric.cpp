// SPDX-License-Identifier: Apache-2.0
// NvmlSource::read_fabric: PCIe link generation and width (current and max), the row remapper's
// failure flag (field 145), persistence mode and the NVLink links with their error counters.
#include "nvml/nvml_source.hpp"

namespace gua::nvml {

namespace {

std::optional<unsigned> uint_if(nvmlReturn_t rc, unsigned value) {
    return rc == NVML_SUCCESS ? std::optional<unsigned>(value) : std::nullopt;
}

std::optional<bool> remap_failure_of(const Library& lib, nvmlDevice_t handle) {
    nvmlFieldValue_t v{};
    v.fieldId = NVML_FI_DEV_REMAPPED_FAILURE;
    if (lib.call<Entry::device_get_field_values>(handle, 1, &v) != NVML_SUCCESS ||
        v.fieldId != NVML_FI_DEV_REMAPPED_FAILURE || v.nvmlReturn != NVML_SUCCESS) {
        return std::nullopt;
    }
    switch (v.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT:
        return v.value.uiVal != 0;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return v.value.ullVal != 0;
    default:
        return std::nullopt;
    }
}

/// Links 0, 1, … until the driver stops answering; their error counters summed.
void read_nvlink(const Library& lib, nvmlDevice_t handle, FabricReading& out) {
    unsigned links = 0;
    unsigned active = 0;
    std::uint64_t sums[3] = {0, 0, 0};
    bool counted[3] = {false, false, false};
    for (unsigned link = 0; link < k_nvlink_max_links; ++link) {
        unsigned state = 0;
        if (lib.call<Entry::device_get_nvlink_state>(handle, link, &state) != NVML_SUCCESS) {
            break;
        }
        ++links;
        active += state == 1 ? 1 : 0;
        for (int c = 0; c < 3; ++c) {
            unsigned long long value = 0;
            if (lib.call<Entry::device_get_nvlink_error_counter>(
                    handle, link, static_cast<nvmlNvLinkErrorCounter_t>(c), &value) ==
                NVML_SUCCESS) {
                sums[c] += value;
                counted[c] = true;
            }
        }
    }
    if (links == 0) {
        return; // no NVLink (a PCIe card answers NOT_SUPPORTED for link 0)
    }
    out.nvlink_links = links;
    out.nvlink_active = active;
    std::optional<std::uint64_t>* fields[3] = {&out.nvlink_replay, &out.nvlink_recovery,
                                               &out.nvlink_crc};
    for (int c = 0; c < 3; ++c) {
        if (counted[c]) {
            *fields[c] = sums[c];
        }
    }
}

} // namespace

std::vector<FabricReading> NvmlSource::read_fabric() {
    if (!m_enumerated) {
        enumerate(std::nullopt);
    }
    std::vector<FabricReading> out;
    const Library& lib = *m_library;
    for (const Card& card : m_cards) {
        if (card.mig_slot || card.lost) {
            continue;
        }
        FabricReading r;
        r.uuid = card.info.uuid;
        r.index = card.info.index;
        unsigned v = 0;
        nvmlReturn_t rc = lib.call<Entry::device_get_curr_pcie_link_generation>(card.handle, &v);
        r.pcie_gen = uint_if(rc, v);
        rc = lib.call<Entry::device_get_max_pcie_link_generation>(card.handle, &v);
        r.pcie_gen_max = uint_if(rc, v);
        rc = lib.call<Entry::device_get_curr_pcie_link_width>(card.handle, &v);
        r.pcie_width = uint_if(rc, v);
        rc = lib.call<Entry::device_get_max_pcie_link_width>(card.handle, &v);
        r.pcie_width_max = uint_if(rc, v);
        rc = lib.call<Entry::device_get_persistence_mode>(card.handle, &v);
        if (rc == NVML_SUCCESS) {
            r.persistence = v == 1;
        }
        r.remap_failure = remap_failure_of(lib, card.handle);
        read_nvlink(lib, card.handle, r);
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace gua::nvml

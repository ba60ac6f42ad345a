// SPDX-License-Identifier: Apache-2.0
// Per-poll PCIe link generation and width, and the held NVLink link counts and PCIe maxima.
#include "nvml/bus_poll.hpp"

namespace gua::nvml {

namespace {

/// One unsigned reading: `Fn(handle, &value)`, nullopt unless it succeeded. (The call runs
/// before the value is read: never both as arguments of one call, whose order is unspecified.)
template <Entry Fn> std::optional<std::int64_t> uint_of(const Library& lib, nvmlDevice_t handle) {
    unsigned int v = 0;
    const nvmlReturn_t rc = lib.call<Fn>(handle, &v);
    return rc == NVML_SUCCESS ? std::optional<std::int64_t>(v) : std::nullopt;
}

/// Links 0, 1, … until the driver stops answering (a PCIe card answers NOT_SUPPORTED for link
/// 0, an NVLink card INVALID_ARGUMENT past its last link).
void read_links(const Library& lib, nvmlDevice_t handle, BusHold& hold) {
    std::int64_t links = 0;
    std::int64_t active = 0;
    for (unsigned int link = 0; link < k_nvlink_max_links; ++link) {
        unsigned int state = 0;
        if (lib.call<Entry::device_get_nvlink_state>(handle, link, &state) != NVML_SUCCESS) {
            break;
        }
        ++links;
        active += state == 1 ? 1 : 0;
    }
    hold.nvlink_links = links > 0 ? std::optional(links) : std::nullopt;
    hold.nvlink_active = links > 0 ? std::optional(active) : std::nullopt;
}

} // namespace

void read_bus(const Library& lib, Card& card, TimeUs now, telemetry::CardReadings& r) {
    r.pcie_gen = uint_of<Entry::device_get_curr_pcie_link_generation>(lib, card.handle);
    r.pcie_width = uint_of<Entry::device_get_curr_pcie_link_width>(lib, card.handle);
    BusHold& hold = card.bus;
    if (!hold.read_at || now < *hold.read_at || now - *hold.read_at >= k_bus_hold_us) {
        hold.read_at = now;
        hold.pcie_gen_max = uint_of<Entry::device_get_max_pcie_link_generation>(lib, card.handle);
        hold.pcie_width_max = uint_of<Entry::device_get_max_pcie_link_width>(lib, card.handle);
        read_links(lib, card.handle, hold);
    }
    r.pcie_gen_max = hold.pcie_gen_max;
    r.pcie_width_max = hold.pcie_width_max;
    r.nvlink_links = hold.nvlink_links;
    r.nvlink_links_active = hold.nvlink_active;
}

} // namespace gua::nvml

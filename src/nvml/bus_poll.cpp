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

/// The current PCIe generation and width: read every poll, kept when the card is busy or has not
/// been busy yet.
void read_pcie_link(const Library& lib, Card& card, bool busy) {
    BusHold& hold = card.bus;
    const std::optional<std::int64_t> gen =
        uint_of<Entry::device_get_curr_pcie_link_generation>(lib, card.handle);
    const std::optional<std::int64_t> width =
        uint_of<Entry::device_get_curr_pcie_link_width>(lib, card.handle);
    if (busy || !hold.pcie_read_busy) {
        hold.pcie_gen = gen;
        hold.pcie_width = width;
        hold.pcie_read_busy = busy && gen && width;
    }
}

} // namespace

void read_bus(const Library& lib, Card& card, TimeUs now, bool busy, telemetry::CardReadings& r) {
    read_pcie_link(lib, card, busy);
    BusHold& hold = card.bus;
    r.pcie_gen = hold.pcie_gen;
    r.pcie_width = hold.pcie_width;
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

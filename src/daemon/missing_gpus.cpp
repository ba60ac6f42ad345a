// SPDX-License-Identifier: Apache-2.0
// MissingGpuWatch (see missing_gpus.hpp).
#include "daemon/missing_gpus.hpp"

#include "faults/catalog.hpp"
#include "ops/doctor.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace gua::daemon {

std::string pci_devices_dir() {
    const char* root = std::getenv("GUA_TEST_SYSFS_ROOT"); // test-only seam
    return std::string(root != nullptr && *root != '\0' ? root : "/sys") + "/bus/pci/devices";
}

std::string bus_check_skipped() {
    const char* visible = std::getenv("NVIDIA_VISIBLE_DEVICES");
    if (visible == nullptr || *visible == '\0' || std::string_view(visible) == "all") {
        return "";
    }
    return std::string("NVIDIA_VISIBLE_DEVICES=") + visible +
           ": a container given some GPUs sees every GPU of the host on the PCI bus";
}

MissingGpuWatch::MissingGpuWatch(std::string devices_dir, std::vector<telemetry::DeviceInfo> known)
    : m_devices_dir(std::move(devices_dir)), m_known(std::move(known)) {}

std::string MissingGpuWatch::uuid_at(const std::string& bus_id, const telemetry::Tick& tick) const {
    for (const telemetry::CardTickRecord& c : tick.cards) {
        if (c.device.parent_uuid.empty() && !c.device.pci_bus_id.empty() &&
            ops::normalized_bus_id(c.device.pci_bus_id) == bus_id) {
            return c.device.uuid; // a lost card
        }
    }
    for (auto it = m_known.rbegin(); it != m_known.rend(); ++it) { // the newest record first
        if (it->parent_uuid.empty() && !it->pci_bus_id.empty() &&
            ops::normalized_bus_id(it->pci_bus_id) == bus_id) {
            return it->uuid;
        }
    }
    return "";
}

std::vector<telemetry::FaultEvent> MissingGpuWatch::on_tick(const telemetry::Tick& tick) {
    std::vector<telemetry::FaultEvent> out;
    const std::pair counts{tick.cards.size(), tick.lost_uuids.size()};
    if (m_counts == counts) {
        return out;
    }
    m_counts = counts;
    std::set<std::string> working;
    for (const telemetry::CardTickRecord& c : tick.cards) {
        if (std::find(tick.lost_uuids.begin(), tick.lost_uuids.end(), c.device.uuid) !=
            tick.lost_uuids.end()) {
            continue;
        }
        if (c.device.pci_bus_id.empty()) {
            return out; // e.g. a MIG instance without its GPU's address: no card-by-card match
        }
        working.insert(ops::normalized_bus_id(c.device.pci_bus_id));
    }
    std::erase_if(m_reported, [&](const std::string& id) { return working.count(id) > 0; });
    const std::vector<std::string> on_bus = ops::pci_gpus(m_devices_dir);
    if (on_bus.size() <= working.size()) {
        return out; // as many working cards as GPUs on the bus: none is missing
    }
    for (const std::string& id : on_bus) {
        if (working.count(id) > 0 || !m_reported.insert(id).second) {
            continue;
        }
        telemetry::FaultEvent e;
        e.at_us = tick.t0 + tick.duration_us;
        e.uuid = uuid_at(id, tick);
        e.pci_bus_id = id;
        e.xid = faults::k_gpu_missing_code;
        e.message = "listed on the PCI bus (sysfs) but NVML cannot open it";
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace gua::daemon

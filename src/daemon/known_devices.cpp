// SPDX-License-Identifier: Apache-2.0
// recorded_devices: the gpu table as DeviceInfo.
#include "daemon/known_devices.hpp"

namespace gua::daemon {

std::vector<telemetry::DeviceInfo> recorded_devices(store::Database& db) {
    std::vector<telemetry::DeviceInfo> out;
    store::Statement st = db.prepare("SELECT uuid, idx, name, memory_total_mib, pci_bus_id, "
                                     "parent_uuid FROM gpu ORDER BY id");
    while (st.step()) {
        telemetry::DeviceInfo d;
        d.uuid = st.text(0);
        d.index = static_cast<int>(st.int64(1));
        d.name = st.text(2);
        d.memory_total_mib = st.opt_int64(3);
        d.pci_bus_id = st.text(4);
        d.parent_uuid = st.text(5);
        out.push_back(std::move(d));
    }
    return out;
}

} // namespace gua::daemon

// SPDX-License-Identifier: Apache-2.0
// MissingGpuWatch: GPUs the PCI bus lists (sysfs) that NVML cannot open, found by the daemon at its
// first tick and whenever its count of cards changes, each recorded once as a fault event of gua's
// own code (faults::k_gpu_missing_code) so that the report's §9 lists it with its time.
#pragma once

#include "telemetry/fault_event.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gua::daemon {

/// /sys/bus/pci/devices, or under GUA_TEST_SYSFS_ROOT when set (a test-only seam, as the
/// doctor's).
std::string pci_devices_dir();

/// Why the bus is not compared with NVML, or empty when it is: a container given only some GPUs
/// (NVIDIA_VISIBLE_DEVICES set to a list) sees every GPU of the host on the bus.
std::string bus_check_skipped();

class MissingGpuWatch {
  public:
    /// Reads `devices_dir` (ops::pci_gpus); `known` (the cards the database recorded before)
    /// names a missing card's uuid when its PCI address matches one.
    MissingGpuWatch(std::string devices_dir, std::vector<telemetry::DeviceInfo> known);
    /// At the first tick and when its number of cards or of lost cards changes: one event (at the
    /// tick's end) per GPU the bus lists that none of the tick's working cards names and that was
    /// not already reported since it was last seen. Nothing when a working card's PCI address is
    /// unknown (then the bus cannot be matched card by card), or when the working cards are as
    /// many as the GPUs on the bus (addresses that differ then are a virtual or fake driver's).
    std::vector<telemetry::FaultEvent> on_tick(const telemetry::Tick& tick);

  private:
    std::string uuid_at(const std::string& bus_id, const telemetry::Tick& tick) const;

    std::string m_devices_dir;
    std::vector<telemetry::DeviceInfo> m_known;
    std::optional<std::pair<std::size_t, std::size_t>> m_counts; ///< (cards, lost) last checked
    std::set<std::string> m_reported; ///< bus ids reported and not seen working since
};

} // namespace gua::daemon

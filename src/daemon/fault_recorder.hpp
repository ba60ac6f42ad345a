// SPDX-License-Identifier: Apache-2.0
// FaultRecorder: the daemon's side of driver faults. It owns the NVML event stream and the
// kernel log reader (each on its own thread), and at each tick merges what they saw, names who
// was on the card, stores the faults and counts them for /metrics; it also records the GPUs the
// PCI bus lists that NVML cannot open (MissingGpuWatch). Never blocks a tick.
#pragma once

#include "daemon/log.hpp"
#include "daemon/missing_gpus.hpp"
#include "export/exporter.hpp"
#include "faults/kmsg_reader.hpp"
#include "faults/merge.hpp"
#include "store/database.hpp"
#include "telemetry/device_source.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::daemon {

class FaultRecorder {
  public:
    /// Starts both listeners; `kernel_log` empty: the kernel log is not read. `pci_devices`: the
    /// sysfs folder of PCI devices compared with NVML's cards (empty: not compared). The source
    /// must outlive the recorder.
    FaultRecorder(telemetry::DeviceSource& source, store::Database& db, std::int64_t run_id,
                  const std::string& kernel_log, Log& log,
                  const std::string& pci_devices = pci_devices_dir());
    /// Merges, attributes (with `tick`, just recorded) and stores the faults that settled.
    void on_tick(const telemetry::Tick& tick, exporter::Exporter* metrics) noexcept;
    /// Stores every fault still waiting for a partner (at the daemon's stop).
    void finish(exporter::Exporter* metrics) noexcept;

  private:
    void store(std::vector<telemetry::FaultEvent> events, exporter::Exporter* metrics) noexcept;
    /// Drains both listeners; a kernel log event that names a MIG GPU instance of a card names
    /// that instance's uuid (NVML's events already do).
    std::vector<telemetry::FaultEvent> drain();

    store::Database& m_db;
    std::int64_t m_run_id;
    Log& m_log;
    faults::FaultMerger m_merger;
    faults::FaultAttributor m_attributor;
    std::map<std::pair<std::string, unsigned>, std::string> m_instances; ///< (GPU, GI) → MIG uuid
    std::unique_ptr<telemetry::FaultStream> m_nvml;
    std::unique_ptr<faults::KmsgReader> m_kmsg;
    std::optional<MissingGpuWatch> m_bus; ///< nullopt: the bus is not compared
};

} // namespace gua::daemon

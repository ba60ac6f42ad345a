// SPDX-License-Identifier: Apache-2.0
// FaultRecorder (see fault_recorder.hpp).
#include "daemon/fault_recorder.hpp"

#include "core/time.hpp"
#include "daemon/known_devices.hpp"
#include "faults/catalog.hpp"
#include "store/db_error.hpp"
#include "store/faults.hpp"

#include <fmt/format.h>

namespace gua::daemon {

FaultRecorder::FaultRecorder(telemetry::DeviceSource& source, store::Database& db,
                             std::int64_t run_id, const std::string& kernel_log, Log& log,
                             const std::string& pci_devices)
    : m_db(db), m_run_id(run_id), m_log(log) {
    const std::vector<telemetry::DeviceInfo> cards = source.devices();
    m_merger.set_cards(cards);
    for (const telemetry::DeviceInfo& card : cards) {
        if (const auto gi = source.gpu_instance_of(card.uuid); gi && !card.parent_uuid.empty()) {
            m_instances[{card.parent_uuid, *gi}] = card.uuid;
        }
    }
    if (auto* provider = dynamic_cast<telemetry::FaultStreamProvider*>(&source)) {
        m_nvml = provider->open_fault_stream();
    }
    if (m_nvml) {
        m_log.line("gua daemon: " + m_nvml->describe());
    }
    if (const std::string why = bus_check_skipped(); !why.empty()) {
        m_log.line("gua daemon: the PCI bus is not compared with NVML's cards (" + why + ")");
    } else if (!pci_devices.empty()) {
        m_bus.emplace(pci_devices, recorded_devices(db));
    }
    if (kernel_log.empty()) {
        return;
    }
    faults::KmsgOptions options;
    options.path = kernel_log;
    options.boot_id = faults::KmsgReader::boot_id();
    options.after_seq = store::last_kmsg_seq(db, options.boot_id);
    options.cards = cards;
    m_kmsg = std::make_unique<faults::KmsgReader>(std::move(options));
    m_log.line("gua daemon: " + m_kmsg->describe());
}

std::vector<telemetry::FaultEvent> FaultRecorder::drain() {
    std::vector<telemetry::FaultEvent> seen;
    if (m_nvml) {
        m_nvml->drain(seen);
    }
    if (m_kmsg) {
        m_kmsg->drain(seen);
    }
    for (telemetry::FaultEvent& e : seen) {
        if (e.gpu_instance) {
            if (const auto it = m_instances.find({e.uuid, *e.gpu_instance});
                it != m_instances.end()) {
                e.uuid = it->second;
            }
        }
    }
    return seen;
}

void FaultRecorder::on_tick(const telemetry::Tick& tick, exporter::Exporter* metrics) noexcept {
    try {
        m_attributor.on_tick(tick);
        m_merger.add(drain());
        store(m_merger.take_settled(tick.t0 + tick.duration_us), metrics);
        if (m_bus) {
            store(m_bus->on_tick(tick), metrics);
        }
    } catch (const std::exception& e) {
        m_log.line(fmt::format("tick {}: faults not recorded: {}", tick.seq, e.what()));
    }
}

void FaultRecorder::finish(exporter::Exporter* metrics) noexcept {
    try {
        m_merger.add(drain());
        store(m_merger.take_all(), metrics);
    } catch (const std::exception& e) {
        m_log.line(fmt::format("faults not recorded at stop: {}", e.what()));
    }
}

void FaultRecorder::store(std::vector<telemetry::FaultEvent> events,
                          exporter::Exporter* metrics) noexcept {
    if (events.empty()) {
        return;
    }
    for (telemetry::FaultEvent& e : events) {
        m_attributor.attribute(e);
    }
    std::vector<bool> stored;
    try {
        stored = store::insert_faults(m_db, m_run_id, events);
    } catch (const store::DbError& e) {
        m_log.line(fmt::format("{} fault event(s) not stored: {}", events.size(), e.what()));
        return;
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        const telemetry::FaultEvent& e = events[i];
        if (!stored[i]) {
            continue; // a kernel log record stored by an earlier run of this boot
        }
        if (e.xid == faults::k_gpu_missing_code) {
            m_log.line(fmt::format("WARNING: the GPU at PCI {} is on the bus but NVML cannot open "
                                   "it (look for Xid 79 in the kernel log; `gua doctor`)",
                                   e.pci_bus_id));
            continue; // not an Xid: no /metrics Xid counter
        }
        const faults::XidInfo info = faults::xid_info(e.xid);
        m_log.line(fmt::format("Xid {} on {} ({}; {})", e.xid,
                               e.uuid.empty() ? "PCI " + e.pci_bus_id : e.uuid, info.meaning,
                               faults::to_string(info.whose)));
        if (metrics != nullptr) {
            metrics->on_fault(e.uuid, e.xid);
        }
    }
}

} // namespace gua::daemon

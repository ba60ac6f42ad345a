// SPDX-License-Identifier: Apache-2.0
// The fake driver's events: event sets, delivery of the scenario's events to nvmlEventSetWait_v2,
// and the kernel-log records it writes for them (the kmsg fixture file).
#include "driver.hpp"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>

namespace gua::fake_nvml {
namespace {

std::int64_t monotonic_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

/// "00000000:3B:00.0" → "0000:3b:00" (the kernel log's form: 4-digit domain, no function).
std::string kmsg_pci(const std::string& bus_id) {
    std::string s = bus_id;
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    const std::size_t colon = s.find(':');
    std::string domain = colon == std::string::npos ? "0000" : s.substr(0, colon);
    if (domain.size() > 4) {
        domain = domain.substr(domain.size() - 4);
    }
    std::string rest = colon == std::string::npos ? s : s.substr(colon + 1);
    if (const std::size_t dot = rest.find('.'); dot != std::string::npos) {
        rest = rest.substr(0, dot);
    }
    return domain + ":" + rest;
}

} // namespace

nvml::nvmlEventSet_t Driver::event_set_create() {
    m_event_sets.push_back(std::make_unique<EventSet>());
    m_event_sets.back()->delivered.assign(m_scenario.events.size(), false);
    return reinterpret_cast<nvml::nvmlEventSet_t>(m_event_sets.back().get());
}

bool Driver::event_set_free(nvml::nvmlEventSet_t set) {
    for (auto it = m_event_sets.begin(); it != m_event_sets.end(); ++it) {
        if (reinterpret_cast<nvml::nvmlEventSet_t>(it->get()) == set) {
            m_event_sets.erase(it);
            return true;
        }
    }
    return false;
}

EventSet* Driver::event_set(nvml::nvmlEventSet_t set) {
    for (const auto& s : m_event_sets) {
        if (reinterpret_cast<nvml::nvmlEventSet_t>(s.get()) == set) {
            return s.get();
        }
    }
    return nullptr;
}

std::optional<nvmlReturn_t> Driver::next_event(EventSet& set, nvml::nvmlEventData_t& out) {
    const double t = now();
    for (std::size_t i = 0; i < m_scenario.events.size(); ++i) {
        const EventSpec& e = m_scenario.events[i];
        if (e.at > t) {
            break;
        }
        if (set.delivered[i] || !e.nvml) {
            continue;
        }
        for (const EventSet::Registration& r : set.registrations) {
            if (r.device == e.device && (r.mask & e.type) != 0 && e.at >= r.since) {
                set.delivered[i] = true;
                out.device = handle_of(e.device);
                out.eventType = e.type;
                out.eventData = e.xid;
                out.gpuInstanceId = nvml::NVML_INSTANCE_ID_NONE;
                out.computeInstanceId = nvml::NVML_INSTANCE_ID_NONE;
                if (e.mig_instance >= 0) {
                    const MigInstance& m =
                        m_scenario.devices[e.device]
                            .mig_instances[static_cast<std::size_t>(e.mig_instance)];
                    out.gpuInstanceId = m.gpu_instance_id;
                    out.computeInstanceId = m.compute_instance_id;
                }
                return nvml::NVML_SUCCESS;
            }
        }
    }
    for (const EventSet::Registration& r : set.registrations) {
        if (fault("nvmlEventSetWait", r.device) == nvml::NVML_ERROR_GPU_IS_LOST) {
            return nvml::NVML_ERROR_GPU_IS_LOST;
        }
    }
    return std::nullopt;
}

void Driver::emit_kmsg() {
    if (m_kmsg_file.empty() || m_kmsg_next >= m_scenario.events.size()) {
        return;
    }
    const double t = now();
    if (m_scenario.events[m_kmsg_next].at > t) {
        return;
    }
    std::ofstream out(m_kmsg_file, std::ios::app);
    for (; m_kmsg_next < m_scenario.events.size(); ++m_kmsg_next) {
        const EventSpec& e = m_scenario.events[m_kmsg_next];
        if (e.at > t) {
            break;
        }
        if (!e.kmsg || e.type != 0x8) {
            continue;
        }
        const Device& d = m_scenario.devices[e.device];
        const std::int64_t ts =
            m_clock_file.empty()
                ? m_mono_start_us + static_cast<std::int64_t>(e.at / m_scenario.time_scale * 1e6)
                : monotonic_us();
        const std::string pci = kmsg_pci(d.pci_bus_id);
        if (!m_kmsg_uuid_said[e.device]) {
            m_kmsg_uuid_said[e.device] = true;
            out << "4," << ++m_kmsg_seq << ',' << ts << ",-;NVRM: GPU at PCI:" << pci << ": "
                << d.uuid << '\n';
        }
        std::string where = "PCI:" + pci;
        if (e.mig_instance >= 0) {
            const MigInstance& m = d.mig_instances[static_cast<std::size_t>(e.mig_instance)];
            char ids[48];
            std::snprintf(ids, sizeof(ids), " GPU-I:%02u GPU-CI:%02u", m.gpu_instance_id,
                          m.compute_instance_id);
            where += ids;
        }
        out << "4," << ++m_kmsg_seq << ',' << ts << ",-;NVRM: Xid (" << where << "): " << e.xid;
        if (e.pid >= 0) {
            out << ", pid=" << e.pid << ", name=" << (e.name.empty() ? "<unknown>" : e.name);
        }
        if (!e.message.empty()) {
            out << ", " << e.message;
        }
        out << '\n';
    }
}

} // namespace gua::fake_nvml

// SPDX-License-Identifier: Apache-2.0
// §9's driver-fault findings (see fault_findings.hpp).
#include "audit/fault_findings.hpp"

#include "core/printable.hpp"
#include "core/time.hpp"
#include "faults/catalog.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace gua::audit {

namespace {

/// "alice (python3, pid 534)", each holder once, at most four then "and N more".
std::string holders_text(const std::vector<const telemetry::FaultEvent*>& events) {
    std::set<std::string> names;
    for (const telemetry::FaultEvent* e : events) {
        for (const telemetry::FaultHolder& h : e->holders) {
            const std::string user = h.identity ? h.identity->user : "unknown";
            names.insert(fmt::format("{} ({}, pid {})", printable(user),
                                     h.process_name.empty() ? "?" : printable(h.process_name),
                                     h.pid));
        }
    }
    if (names.empty()) {
        return "no process listed on the card";
    }
    std::string out;
    std::size_t shown = 0;
    for (const std::string& n : names) {
        if (shown == 4) {
            out += fmt::format(" and {} more", names.size() - shown);
            break;
        }
        out += (shown++ == 0 ? "" : ", ") + n;
    }
    return out;
}

std::string sources_text(const std::vector<const telemetry::FaultEvent*>& events) {
    unsigned all = 0;
    for (const telemetry::FaultEvent* e : events) {
        all |= e->sources;
    }
    if (all == (telemetry::fault_from_nvml | telemetry::fault_from_kmsg)) {
        return "NVML and the kernel log";
    }
    return all == telemetry::fault_from_kmsg ? "the kernel log" : "NVML";
}

/// gua's record of a GPU the PCI bus lists but NVML cannot open (daemon/missing_gpus.hpp).
HealthFinding missing_gpu_finding(int gpu, const telemetry::FaultEvent& e) {
    return HealthFinding{
        "xid-hardware", gpu, 0.0,
        fmt::format("GPU at PCI {} is on the bus but the driver cannot open it, seen at {} (the "
                    "daemon compared the PCI bus in sysfs with NVML's cards); do: look for Xid 79 "
                    "or initialization errors in the kernel log (`dmesg | grep NVRM`), check "
                    "`nvidia-smi -q` and the card's power and seating; gua records no time for a "
                    "card NVML cannot open",
                    printable(e.pci_bus_id), format_iso8601(e.at_us))};
}

} // namespace

std::string fault_finding_id(int xid) {
    if (xid == faults::k_gpu_missing_code) {
        return "xid-hardware";
    }
    return fmt::format("xid-{}", faults::to_string(faults::xid_info(xid).whose));
}

void add_fault_findings(int gpu, const std::vector<telemetry::FaultEvent>& events,
                        std::vector<HealthFinding>& out) {
    std::map<int, std::vector<const telemetry::FaultEvent*>> by_code;
    for (const telemetry::FaultEvent& e : events) {
        if (e.xid == faults::k_gpu_missing_code) {
            out.push_back(missing_gpu_finding(gpu, e));
        } else {
            by_code[e.xid].push_back(&e);
        }
    }
    for (const auto& [code, list] : by_code) {
        const faults::XidInfo info = faults::xid_info(code);
        const std::string when = list.size() == 1
                                     ? fmt::format("at {}", format_iso8601(list.front()->at_us))
                                     : fmt::format("{} times, {} to {}", list.size(),
                                                   format_iso8601(list.front()->at_us),
                                                   format_iso8601(list.back()->at_us));
        std::string process;
        if (list.front()->pid) {
            process = fmt::format("; the kernel log names pid {}", *list.front()->pid);
            if (!list.front()->process_name.empty()) {
                process += fmt::format(" ({})", printable(list.front()->process_name));
            }
        }
        std::string name = fmt::format("Xid {}", code);
        if (!info.mnemonic.empty()) {
            name += fmt::format(" {}", info.mnemonic);
        }
        out.push_back(HealthFinding{
            fault_finding_id(code), gpu, 0.0,
            fmt::format("{} {} (from {}): {}; {} fault; on the card: {}{}; do: {}", name, when,
                        sources_text(list), info.meaning, faults::to_string(info.whose),
                        holders_text(list), process, info.action)});
    }
}

} // namespace gua::audit

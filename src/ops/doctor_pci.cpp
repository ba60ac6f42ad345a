// SPDX-License-Identifier: Apache-2.0
// Doctor's PCI check: NVIDIA GPUs the PCI bus lists (sysfs) that NVML does not show — a card
// that fell off the bus, failed to initialize or is hidden from the driver.
#include "ops/doctor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

namespace gua::ops {

namespace {

std::string first_word(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::string word;
    in >> word;
    for (char& c : word) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return word;
}

} // namespace

std::string normalized_bus_id(std::string id) {
    for (char& c : id) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    const std::size_t colon = id.find(':');
    if (colon != std::string::npos && colon > 4) {
        id.erase(0, colon - 4);
    }
    return id;
}

std::vector<std::string> pci_gpus(const std::string& devices_dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(devices_dir, ec)) {
        const std::string cls = first_word(entry.path() / "class");
        if (first_word(entry.path() / "vendor") == "0x10de" &&
            (cls.starts_with("0x0300") || cls.starts_with("0x0302"))) {
            out.push_back(normalized_bus_id(entry.path().filename().string()));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Finding pci_gpus_finding(const std::vector<std::string>& on_bus,
                         const std::vector<std::string>& nvml_bus_ids) {
    Finding f{"pci_gpus", "GPUs on the PCI bus", Severity::ok, "", ""};
    std::set<std::string> seen;
    for (const std::string& id : nvml_bus_ids) {
        seen.insert(normalized_bus_id(id));
    }
    std::vector<std::string> missing;
    for (const std::string& id : on_bus) {
        if (seen.count(id) == 0) {
            missing.push_back(id);
        }
    }
    if (on_bus.empty()) {
        f.severity = Severity::info;
        f.message = "no NVIDIA GPU listed on the PCI bus (sysfs): not compared with NVML";
        return f;
    }
    if (missing.empty()) {
        f.message = fmt::format("{} NVIDIA GPU{} on the PCI bus, each visible to NVML",
                                on_bus.size(), on_bus.size() == 1 ? "" : "s");
        return f;
    }
    f.severity = Severity::warn;
    f.message =
        fmt::format("the PCI bus lists {} NVIDIA GPU{} that NVML does not show: {}", missing.size(),
                    missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));
    f.fix = "look for Xid 79 (\"fallen off the bus\") or initialization errors in the kernel log "
            "(`dmesg | grep NVRM`), check `nvidia-smi -q` and the card's power and seating; the "
            "daemon records no time for a card NVML does not show";
    return f;
}

} // namespace gua::ops

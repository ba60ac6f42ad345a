// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: kernel log records and the NVIDIA driver's lines in them (faults/kmsg.cpp),
// with the properties the reader relies on.
#include "faults/kmsg.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

/// A PCI address as the parsers give it: "dddd:bb:dd"-like, lowercase hex and colons only.
bool plain_pci(std::string_view pci) {
    if (pci.empty() || pci.size() > 24) {
        return false;
    }
    for (const char c : pci) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':')) {
            return false;
        }
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    std::string_view text = line;
    if (const auto record = gua::faults::parse_kmsg_record(line)) {
        // The message is the line's tail, after the header's ';'.
        if (record->priority < 0 || record->mono_us < 0 || !line.ends_with(record->text) ||
            record->text.size() >= line.size()) {
            std::abort();
        }
        text = record->text;
    }
    if (const auto xid = gua::faults::parse_xid_line(text)) {
        if (!plain_pci(xid->pci) || xid->xid < 0 || xid->message.size() > text.size() ||
            xid->name.size() > text.size()) {
            std::abort();
        }
    }
    if (const auto gpu = gua::faults::parse_gpu_at_pci(text)) {
        if (!plain_pci(gpu->pci) || !gpu->uuid.starts_with("GPU-")) {
            std::abort();
        }
    }
    if (const auto off = gua::faults::parse_fallen_off(text)) {
        if (!plain_pci(off->pci)) {
            std::abort();
        }
    }
    const std::string bus = gua::faults::kmsg_pci_of(text);
    if (!bus.empty() && !plain_pci(bus)) {
        std::abort();
    }
    return 0;
}

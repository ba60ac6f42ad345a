// SPDX-License-Identifier: Apache-2.0
// Pure parsers of the kernel log (/dev/kmsg records) and of the NVIDIA driver's lines in it: Xid
// reports, the once-per-GPU "GPU at PCI" line, and "fallen off the bus". No I/O; any input is
// safe (a line that does not match is nullopt, never an error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gua::faults {

/// One /dev/kmsg record: `<prio>,<seq>,<timestamp µs>,<flags>[,…];<text>`.
struct KmsgRecord {
    int priority = 0;         ///< facility × 8 + level
    std::uint64_t seq = 0;    ///< per boot
    std::int64_t mono_us = 0; ///< monotonic µs since boot when the kernel logged it
    std::string_view text;    ///< the message (a view into the line)
};

/// The record of one /dev/kmsg line (without its newline); nullopt for a continuation line (it
/// starts with a space) or anything malformed.
std::optional<KmsgRecord> parse_kmsg_record(std::string_view line);

/// An `NVRM: Xid (PCI:dddd:bb:dd[ GPU-I:NN[ GPU-CI:NN]]): N[, pid=P][, name=NAME][, rest]` line.
struct XidLine {
    std::string pci; ///< "dddd:bb:dd", lowercase (older drivers: no "PCI:")
    std::optional<unsigned> gpu_instance;
    std::optional<unsigned> compute_instance;
    int xid = 0;
    std::optional<std::uint32_t> pid; ///< absent, or `'<unknown>'`: nullopt
    std::string name;                 ///< empty when absent or `<unknown>`
    std::string message;              ///< the rest of the line
};

/// The Xid report in a kernel log message; nullopt when it is not one.
std::optional<XidLine> parse_xid_line(std::string_view text);

/// `NVRM: GPU at PCI:dddd:bb:dd: GPU-<uuid>` (written once per GPU before its first Xid).
struct GpuAtPci {
    std::string pci;  ///< "dddd:bb:dd", lowercase
    std::string uuid; ///< "GPU-…"
};
std::optional<GpuAtPci> parse_gpu_at_pci(std::string_view text);

/// The PCI address ("dddd:bb:dd") of `NVRM: GPU dddd:bb:dd.f: GPU has fallen off the bus.`, or of
/// the first line of the three-line form `NVRM: The NVIDIA GPU dddd:bb:dd.f` (its third line says
/// "fallen off the bus"); `multi_line` tells which.
struct FallenOff {
    std::string pci;
    bool multi_line = false;
};
std::optional<FallenOff> parse_fallen_off(std::string_view text);

/// The kernel log's form ("dddd:bb:dd", lowercase) of an NVML bus id such as
/// "00000000:3B:00.0"; empty when `bus_id` is not one.
std::string kmsg_pci_of(std::string_view bus_id);

} // namespace gua::faults

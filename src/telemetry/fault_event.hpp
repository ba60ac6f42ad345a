// SPDX-License-Identifier: Apache-2.0
// A driver fault (an Xid) as a source reports it, and FaultStream, the seam through which a
// device source hands its fault events to the daemon from a thread of its own.
#pragma once

#include "core/time.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gua::telemetry {

/// Where an event was seen (bits; a merged event carries both).
enum FaultSourceBit : unsigned {
    fault_from_nvml = 1, ///< nvmlEventSetWait_v2
    fault_from_kmsg = 2, ///< an `NVRM: Xid` line of the kernel log
};

/// Who was on the card when the fault came (filled by the daemon from the tick data).
struct FaultHolder {
    std::uint32_t pid = 0;
    std::string process_name;
    std::optional<Identity> identity;
    friend bool operator==(const FaultHolder&, const FaultHolder&) = default;
};

/// One fault event.
struct FaultEvent {
    TimeUs at_us = 0; ///< wall time the event was seen (NVML: when the wait returned)
    std::string uuid; ///< the card ("GPU-…"); empty when the kernel log's PCI address is unknown
    std::string pci_bus_id;           ///< as the kernel log names it ("0000:3b:00"); may be empty
    int xid = 0;                      ///< the driver's code; 999 = NVML's "unknown Xid"
    unsigned sources = 0;             ///< FaultSourceBit
    std::optional<std::uint32_t> pid; ///< the kernel log's pid=, when it names one
    std::string process_name;         ///< the kernel log's name=, when it names one
    std::string message;              ///< the rest of the kernel log line (may be empty)
    std::optional<unsigned> gpu_instance;     ///< MIG GPU instance, when attributable
    std::optional<unsigned> compute_instance; ///< MIG compute instance, when attributable
    std::string boot_id;                      ///< kernel log record: this boot's id
    std::optional<std::uint64_t> kmsg_seq;    ///< kernel log record: its sequence number
    std::vector<FaultHolder> holders;         ///< who was on the card (filled later)
};

/// A producer of fault events that runs on its own thread (started by the constructor of the
/// implementation, stopped and joined by its destructor, never blocking a tick).
class FaultStream {
  public:
    virtual ~FaultStream() = default;
    /// Moves the events seen since the last call into `out` (appending); never blocks long.
    virtual void drain(std::vector<FaultEvent>& out) = 0;
    /// One line for the daemon's log: what it listens to, or why it cannot.
    virtual std::string describe() const = 0;
};

/// Implemented beside DeviceSource by a source that can report the driver's faults (the NVML
/// source); the daemon finds it with a dynamic_cast, so that sources without faults need nothing.
class FaultStreamProvider {
  public:
    virtual ~FaultStreamProvider() = default;
    /// Starts listening for the driver's fault events on a thread of the stream's own; nullptr
    /// when the source has none. The stream must be destroyed before the source.
    virtual std::unique_ptr<FaultStream> open_fault_stream() = 0;
};

} // namespace gua::telemetry

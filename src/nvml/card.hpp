// SPDX-License-Identifier: Apache-2.0
// Per-card state kept by NvmlSource between polls (handle, cursors, lost flag), and the counters
// of driver oddities it worked around.
#pragma once

#include "core/time.hpp"
#include "nvml/abi.hpp"
#include "nvml/process_list.hpp"
#include "nvml/sample_cursor.hpp"
#include "telemetry/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gua::nvml {

/// Driver oddities seen since the source was opened (for diagnostics; never affect readings).
struct NvmlDiagnostics {
    int junk_util_samples = 0;    ///< ring samples over 100 % dropped
    int junk_process_samples = 0; ///< per-process entries over 100 % dropped (driver junk)
    /// Per-process entries dropped because their pid was not in the poll's process list (a
    /// process that exited before the list was read, or that no list showed): not driver junk.
    int unlisted_process_samples = 0;
    int lost_sample_batches = 0;     ///< polls where the ring had overflowed since the last one
    DurationUs unmeasured_us = 0;    ///< poll time the utilization rings could not show
    int stride_corrections = 0;      ///< process lists whose entry stride had to be changed
    int dropped_process_entries = 0; ///< implausible process entries left out
    int junk_power_readings = 0;     ///< power draws or limits outside what a card can have
};

/// The readings of a card that bus_poll.cpp holds between polls: the maxima and link states read
/// at most every k_bus_hold_us, and the PCIe link as last read while the card was busy.
struct BusHold {
    std::optional<TimeUs> read_at; ///< wall time of the last read (nullopt: never)
    std::optional<std::int64_t> pcie_gen_max, pcie_width_max, nvlink_links, nvlink_active;
    std::optional<std::int64_t> pcie_gen, pcie_width; ///< at the latest busy poll (else latest)
    bool pcie_read_busy = false; ///< pcie_gen and pcie_width come from a busy poll
};

/// One card: a physical GPU, or a MIG instance of one.
struct Card {
    telemetry::DeviceInfo info;
    nvmlDevice_t handle = nullptr;
    unsigned int index = 0;                      ///< driver index of the physical GPU
    std::optional<unsigned int> mig_slot;        ///< MIG instances: slot under the physical GPU
    nvmlDevice_t parent = nullptr;               ///< MIG instances: the physical GPU's handle
    std::optional<unsigned int> gpu_instance_id; ///< MIG instances: their GPU instance id
    std::optional<std::uint64_t> memory_total_bytes;
    bool lost = false;               ///< GPU_IS_LOST seen; re-probed on later polls
    bool samples_supported = true;   ///< false once the util ring said NOT_SUPPORTED
    std::optional<TimeUs> last_poll; ///< wall time of the previous poll (lost or not)
    UtilCursor util;
    ProcessUtilCursor process_util;
    /// Entries offered to the driver at once, so that steady polls skip the size queries: per
    /// ListKind for the process lists, then the utilization ring and per-process utilization
    /// (0: ask for the size first).
    std::array<unsigned int, 3> list_capacity{};
    unsigned int ring_capacity = 0;
    unsigned int process_sample_capacity = 0;
    BusHold bus;
};

/// Order of the process-list entry points in SourceState::process_stride.
enum class ListKind : std::uint8_t { compute = 0, graphics = 1, mps = 2 };

/// Storage of one card's poll, kept from poll to poll (cards are read one after another) so that
/// the steady path allocates nothing.
struct PollBuffers {
    std::vector<nvmlSample_t> samples; ///< nvmlDeviceGetSamples reply
    std::vector<RingSample> ring;      ///< the reply decoded
    RingFold fold;                     ///< scratch of UtilCursor::fold (its samples are swapped)
    ProcessListBuffer list;
    std::vector<nvmlProcessUtilizationSample_t> process_samples;
    std::vector<ProcessUtilEntry> process_entries;
    std::vector<std::uint32_t> pids;
    PidUtils pid_utils;
};

/// State shared by every card of one source.
struct SourceState {
    std::array<std::size_t, 3> process_stride{}; ///< bytes per entry, per ListKind
    NvmlDiagnostics diagnostics;
    PollBuffers buffers;
};

} // namespace gua::nvml

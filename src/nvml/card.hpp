// Per-card state kept by NvmlSource between polls (handle, cursors, lost flag), and the counters
// of driver oddities it worked around.
#pragma once

#include "core/time.hpp"
#include "nvml/abi.hpp"
#include "nvml/sample_cursor.hpp"
#include "telemetry/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace gua::nvml {

/// Driver oddities seen since the source was opened (for diagnostics; never affect readings).
struct NvmlDiagnostics {
    int junk_util_samples = 0;       ///< ring samples over 100 % dropped
    int junk_process_samples = 0;    ///< per-process entries for unknown pids or over 100 % dropped
    int lost_sample_batches = 0;     ///< polls where the ring had overflowed since the last one
    int stride_corrections = 0;      ///< process lists whose entry stride had to be changed
    int dropped_process_entries = 0; ///< implausible process entries left out
};

/// One card: a physical GPU, or a MIG instance of one.
struct Card {
    telemetry::DeviceInfo info;
    nvmlDevice_t handle = nullptr;
    unsigned int index = 0;               ///< driver index of the physical GPU
    std::optional<unsigned int> mig_slot; ///< MIG instances: slot under the physical GPU
    std::optional<std::uint64_t> memory_total_bytes;
    bool lost = false;               ///< GPU_IS_LOST seen; re-probed on later polls
    bool samples_supported = true;   ///< false once the util ring said NOT_SUPPORTED
    std::optional<TimeUs> last_poll; ///< wall time of the previous successful poll
    UtilCursor util;
    ProcessUtilCursor process_util;
};

/// Order of the process-list entry points in SourceState::process_stride.
enum class ListKind : std::uint8_t { compute = 0, graphics = 1, mps = 2 };

/// State shared by every card of one source.
struct SourceState {
    std::array<std::size_t, 3> process_stride{}; ///< bytes per entry, per ListKind
    NvmlDiagnostics diagnostics;
};

} // namespace gua::nvml

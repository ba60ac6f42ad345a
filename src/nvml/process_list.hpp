// Running-process lists: the INSUFFICIENT_SIZE buffer protocol, decoding at the driver's entry
// stride (16/24/32 bytes, nvml-notes §5) with sanity checks that catch a wrong stride, and merging.
#pragma once

#include "nvml/abi.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gua::nvml {

/// One decoded running-process entry.
struct RawProcess {
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> used_bytes; ///< nullopt: the driver said "not available"
    std::uint32_t gpu_instance_id = NVML_INSTANCE_ID_NONE;
    std::uint32_t compute_instance_id = NVML_INSTANCE_ID_NONE;
};

/// A decoded list and what decoding had to do.
struct DecodedProcesses {
    std::vector<RawProcess> processes;
    std::size_t stride = 0; ///< the stride that decoded plausibly (may differ from the asked one)
    int dropped = 0;        ///< implausible entries left out
};

/// Decodes `count` entries of `stride` bytes (16, 24 or 32) from `data`, without checks.
std::vector<RawProcess> decode_process_infos(const std::byte* data, std::size_t count,
                                             std::size_t stride);

/// Whether an entry looks like a real process: 0 < pid ≤ 2^22, memory ≤ the device total (when
/// known), GPU/compute instance ids either "none" or < 64.
bool plausible(const RawProcess& process, std::optional<std::uint64_t> memory_total_bytes);

/// Decodes with `stride`; when entry 0 is plausible but a later entry is not, tries the other of
/// 24/32 bytes and keeps it when every entry is then plausible. Implausible entries are dropped.
/// `data` must hold `count` entries of 32 bytes.
DecodedProcesses decode_checked(const std::byte* data, std::size_t count, std::size_t stride,
                                std::optional<std::uint64_t> memory_total_bytes);

/// One driver call of a running-process entry point: (in/out count, buffer or nullptr).
using ProcessListCall = std::function<nvmlReturn_t(unsigned int* count, void* infos)>;

/// A read process list, or the code of the call that failed.
struct ProcessListRead {
    nvmlReturn_t rc = NVML_SUCCESS;
    DecodedProcesses list;
};

/// Runs the buffer protocol: size query with count 0, then data calls with 2n+5 entries of
/// headroom while the driver answers INSUFFICIENT_SIZE (processes appearing in between), at most
/// 5 data calls and 4096 entries; then decode_checked. A last INSUFFICIENT_SIZE is returned as rc.
ProcessListRead read_process_list(const ProcessListCall& call, std::size_t stride,
                                  std::optional<std::uint64_t> memory_total_bytes);

/// True when a pid appears more than once.
bool has_duplicate_pids(const std::vector<RawProcess>& processes);

/// Merges entries of the same pid: memory of different MIG instances is summed, repeats of the
/// same instance keep the larger value. Order of first appearance is kept. A list without
/// duplicates is returned as it is.
std::vector<RawProcess> merge_duplicate_pids(std::vector<RawProcess> processes);

} // namespace gua::nvml

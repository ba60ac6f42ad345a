// SPDX-License-Identifier: Apache-2.0
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

/// Decodes `count` entries of `stride` bytes (16, 24 or 32) from `data` into `out` (replacing
/// its contents, reusing its storage), without checks.
void decode_process_infos(const std::byte* data, std::size_t count, std::size_t stride,
                          std::vector<RawProcess>& out);

/// Whether an entry looks like a real process: 0 < pid ≤ 2^22, memory ≤ the device total (when
/// known), GPU/compute instance ids either "none" or < 64.
bool plausible(const RawProcess& process, std::optional<std::uint64_t> memory_total_bytes);

/// Decodes into `out` with `stride`; when entry 0 is plausible but a later entry is not, tries the
/// other of 24/32 bytes and keeps it when every entry is then plausible. Implausible entries are
/// dropped. `data` must hold `count` entries of 32 bytes.
void decode_checked(const std::byte* data, std::size_t count, std::size_t stride,
                    std::optional<std::uint64_t> memory_total_bytes, DecodedProcesses& out);

/// One driver call of a running-process entry point: (in/out count, buffer or nullptr).
using ProcessListCall = std::function<nvmlReturn_t(unsigned int* count, void* infos)>;

/// Storage of read_process_list(), kept from read to read so that a steady list allocates
/// nothing.
struct ProcessListBuffer {
    std::vector<std::byte> bytes; ///< the driver's reply
    DecodedProcesses list;        ///< the decoded list of the last successful read
};

/// Runs the buffer protocol: size query with count 0, then data calls with 2n+5 entries of
/// headroom while the driver answers INSUFFICIENT_SIZE (processes appearing in between), at most
/// 5 data calls and 4096 entries; then decode_checked into `buffer.list`. A nonzero `capacity`
/// skips the size query: the first data call offers that many entries (a steady list then takes
/// one call). `capacity` is set to what the successful data call offered (0 after a failure, or
/// when the size query found no processes). Returns the code of the last call (SUCCESS, or e.g. a
/// last INSUFFICIENT_SIZE); `buffer.list` is empty unless it is SUCCESS.
nvmlReturn_t read_process_list(const ProcessListCall& call, std::size_t stride,
                               std::optional<std::uint64_t> memory_total_bytes,
                               unsigned int& capacity, ProcessListBuffer& buffer);

/// True when a pid appears more than once.
bool has_duplicate_pids(const std::vector<RawProcess>& processes);

/// Merges entries of the same pid in place: memory of different MIG instances is summed, repeats
/// of the same instance keep the larger value. Order of first appearance is kept. A list without
/// duplicates is left as it is.
void merge_duplicate_pids(std::vector<RawProcess>& processes);

} // namespace gua::nvml

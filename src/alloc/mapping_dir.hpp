// SPDX-License-Identifier: Apache-2.0
// The job-mapping directory (dcgm-exporter's HPC convention): file names, contents, owner sidecar
// files, and one whole scan of a directory into a Snapshot.
#pragma once

#include "alloc/allocation.hpp"
#include "core/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::alloc {

/// The largest mapping or sidecar file read; a larger one makes its card unknown.
inline constexpr std::size_t k_max_mapping_file_bytes = 4096;
/// The sub-directory holding one owner file per job (dcgm-exporter skips directories).
inline constexpr std::string_view k_owner_dir = ".gua-owners";

/// The device a mapping file names: "3" (NVML index 3) or "3.1" (GPU instance 1 on card 3);
/// nullopt for any other name (ignored, as dcgm-exporter ignores it).
std::optional<DeviceRef> parse_mapping_name(std::string_view name);

/// The job ids of a mapping file: one per line, surrounding blanks trimmed, blank lines skipped;
/// an empty file names none. An id is 1–64 characters of [A-Za-z0-9_.:+-]; anything else is an
/// error naming the line (a hostile or corrupt file).
Result<std::vector<std::string>> parse_job_ids(std::string_view content);

/// What an owner sidecar file (".gua-owners/<job id>") says: "key=value" lines with keys user,
/// account and kind (slurm-job, reservation); unknown keys are ignored, bad values are errors.
struct OwnerInfo {
    std::string user;
    std::string account;
    AllocationKind kind = AllocationKind::slurm_job;
};
Result<OwnerInfo> parse_owner(std::string_view content);

/// Reads the directory `dir` once: every mapping file, and the owner file of each job named.
/// An unreadable directory gives an unreadable snapshot; an unreadable or malformed file makes
/// only its device unknown. Files are opened with O_NOFOLLOW|O_NONBLOCK and read only when they
/// are regular files of at most k_max_mapping_file_bytes.
Snapshot read_mapping_dir(const std::string& dir);

} // namespace gua::alloc

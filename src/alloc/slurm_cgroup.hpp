// SPDX-License-Identifier: Apache-2.0
// Slurm's cgroup layouts → the job a process runs in: job_<id> (cgroup v1 and v2), Slurm 26.05's
// SLUID directories, and multiple-slurmd nodes (slurm_<node>, <node>_slurmstepd.scope).
#pragma once

#include "alloc/allocation.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::alloc {

/// What one Slurm cgroup path says.
struct SlurmCgroup {
    std::string job_id; ///< from "job_<digits>"; empty under a SLUID layout
    std::string sluid;  ///< Slurm 26.05's job directory, e.g. "s5K1KKYAYG5D00"
    std::string node;   ///< multiple-slurmd: "<node>" of slurm_<node> / <node>_slurmstepd.scope
    std::string step;   ///< "0", "batch", "extern", "interactive"; empty above the step level

    /// The job id when known, else the SLUID (what a report shows).
    std::string label() const { return job_id.empty() ? sluid : job_id; }
    friend bool operator==(const SlurmCgroup&, const SlurmCgroup&) = default;
};

/// Reads one cgroup path, e.g. "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0" (v2),
/// "/slurm/uid_1000/job_42/step_batch/task_0" (v1), "/system.slice/slurmstepd.scope/
/// s5K1KKYAYG5D00/step_0" (26.05), "/system.slice/node1_slurmstepd.scope/job_42" or
/// "/slurm_node1/uid_0/job_42" (multiple-slurmd). nullopt when the path names no Slurm job.
std::optional<SlurmCgroup> parse_slurm_cgroup_path(std::string_view path);

/// The label() of parse_slurm_cgroup_path(path), or empty: what identity records as the job.
std::string slurm_job_label(std::string_view path);

/// Reads a whole /proc/<pid>/cgroup text: the v2 line first, then the v1 lines in order; the
/// first line that names a job wins.
std::optional<SlurmCgroup> parse_slurm_cgroup(std::string_view content);

/// SLURM_JOB_ID from the NUL-separated text of /proc/<pid>/environ; empty when absent or not
/// digits.
std::string slurm_job_id_from_environ(std::string_view environ);

/// The job id of a process in `cgroup`: its job_<id>; else SLURM_JOB_ID of its environment (when
/// it could be read); else the one Slurm job the mapping directory names on the card the process
/// uses; else the SLUID.
std::string resolve_slurm_job(const SlurmCgroup& cgroup, std::string_view environ,
                              const std::vector<Allocation>& card_allocations);

} // namespace gua::alloc

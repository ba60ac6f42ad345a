// SPDX-License-Identifier: Apache-2.0
// Which Slurm cgroup layout a node uses (job_<id>, Slurm 26.05's SLUID directories,
// multiple-slurmd, cgroup v1 or v2), read from its cgroup file system for `gua doctor`.
#pragma once

#include <string>
#include <vector>

namespace gua::alloc {

/// What a look at a node's cgroup file system found.
struct SlurmLayout {
    int cgroup_version = 0;           ///< 2, 1, or 0 when neither was found
    bool slurm = false;               ///< a Slurm step daemon's cgroup tree exists
    std::vector<std::string> layouts; ///< among "job_<id>", "SLUID", "multiple-slurmd"
    std::size_t jobs = 0;             ///< job directories seen
    std::size_t sluid_jobs = 0;       ///< of them, named by SLUID only
};

/// Looks under `<root>/sys/fs/cgroup` (root "/" on the live system): the v2 tree's
/// system.slice/[<node>_]slurmstepd.scope, or the v1 controllers' slurm[_<node>]/uid_*/ trees,
/// and reads each job directory's name with parse_slurm_cgroup_path. Reads at most a few hundred
/// directory entries.
SlurmLayout detect_slurm_layout(const std::string& root);

/// One line for `gua doctor`: the layout and whether jobs can be named. `mapping_dir` tells
/// whether a mapping directory is configured (SLUIDs map to job ids through it).
std::string describe_slurm_layout(const SlurmLayout& layout, bool mapping_dir);

/// True when processes' jobs cannot all be named by id (SLUID directories and no mapping
/// directory configured): doctor warns.
bool slurm_layout_warns(const SlurmLayout& layout, bool mapping_dir);

} // namespace gua::alloc

// SPDX-License-Identifier: Apache-2.0
// Pure parser for /proc/<pid>/cgroup: container id, Kubernetes pod, Slurm job and systemd unit.
#pragma once

#include <string>
#include <string_view>

namespace gua::identity {

/// What a process's cgroup paths say about it; each field is empty when the paths do not say.
struct CgroupFacts {
    std::string container_id; ///< 64 lowercase hex chars (Docker, containerd, CRI-O, Podman)
    std::string pod_uid;      ///< Kubernetes pod UID with '_' turned into '-'
    std::string slurm_job;    ///< Slurm job id (digits)
    std::string systemd_unit; ///< innermost .service/.scope that is not a container scope
    /// container_id was read below a cgroup its user can create (user.slice: a user's sessions
    /// and systemd user manager, where rootless containers live): the user's claim, which anyone
    /// can forge with a scope of that name (that scope is then also systemd_unit). Pod uid and
    /// Slurm job are never read there.
    bool user_claimed = false;

    friend bool operator==(const CgroupFacts&, const CgroupFacts&) = default;
};

/// Reads one cgroup path, e.g. "/kubepods/burstable/pod<uid>/<id>" or
/// "/system.slice/slurmstepd.scope/job_42/step_0"; rules in docs/identity.md.
CgroupFacts parse_cgroup_path(std::string_view path);

/// Reads the whole /proc/<pid>/cgroup text (v1 "N:controllers:path" lines and/or the v2 "0::path"
/// line). Each field comes from the first line that has it, in the order: the v2 line, the v1
/// name=systemd line, then the other v1 lines as listed. Malformed lines are ignored.
CgroupFacts parse_cgroup(std::string_view content);

} // namespace gua::identity

// SPDX-License-Identifier: Apache-2.0
// Identity: who a GPU process belongs to (user, and where known container, pod, job, unit, kernel,
// and the names the node gives the pod and container).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gua::telemetry {

/// Who a process belongs to. `user` is never empty: a name, "uid:N" when the attributed uid has no
/// passwd entry, or "unknown" when not even a uid could be read. Other fields are empty when
/// unknown. `user` names the real uid, or the login uid when the real uid is a system account
/// (docs/identity.md).
struct Identity {
    std::string user = "unknown";
    std::optional<std::uint32_t> uid; ///< real uid of the process (status `Uid:`)
    std::string command;              ///< comm (process name), e.g. "python3"
    std::string container_id;         ///< Docker/containerd/CRI-O container id (64 hex chars)
    std::string pod_uid;              ///< Kubernetes pod UID
    std::string slurm_job;            ///< Slurm job id
    std::string systemd_unit; ///< innermost systemd unit, e.g. "jupyter.service", "session-3.scope"
    std::string jupyter_kernel; ///< Jupyter kernel id from ipykernel's connection file name
    std::optional<std::uint32_t> login_uid; ///< audit login uid (/proc/<pid>/loginuid) when set
    std::string pod_namespace;              ///< Kubernetes namespace of the pod (docs/identity.md)
    std::string pod_name;                   ///< Kubernetes pod name
    std::string container_name; ///< Kubernetes container name, else the Docker/Podman name

    friend bool operator==(const Identity&, const Identity&) = default;
};

/// The identity used for a process whose owner cannot be determined.
inline Identity unknown_identity() {
    return Identity{};
}

} // namespace gua::telemetry

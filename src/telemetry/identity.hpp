// Identity: who a GPU process belongs to (user, and where known container, pod, job, unit, kernel).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gua::telemetry {

/// Who a process belongs to. `user` is never empty: a name, "uid:N" when the uid has no passwd
/// entry, or "unknown" when not even the uid could be read. Other fields are empty when unknown.
struct Identity {
    std::string user = "unknown";
    std::optional<std::uint32_t> uid;
    std::string command;        ///< comm (process name), e.g. "python3"
    std::string container_id;   ///< Docker/containerd/CRI-O container id (64 hex chars)
    std::string pod_uid;        ///< Kubernetes pod UID
    std::string slurm_job;      ///< Slurm job id
    std::string systemd_unit;   ///< systemd unit or user slice, e.g. "jupyter.service"
    std::string jupyter_kernel; ///< Jupyter kernel id from ipykernel's connection file name

    friend bool operator==(const Identity&, const Identity&) = default;
};

/// The identity used for a process whose owner cannot be determined.
inline Identity unknown_identity() { return Identity{}; }

} // namespace gua::telemetry

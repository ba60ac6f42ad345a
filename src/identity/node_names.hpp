// SPDX-License-Identifier: Apache-2.0
// Names the node gives a process's pod and container: Kubernetes namespace, pod and container from
// the kubelet's log directories, else the Docker or Podman container name.
#pragma once

#include "identity/pod_logs.hpp"
#include "identity/runtime_names.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <string>

namespace gua::identity {

/// Where the node keeps what names pods and containers. Test and advanced use: each can be moved
/// with an environment variable (docs/identity.md).
struct NodePaths {
    std::string pod_logs = "/var/log/pods";                  ///< GUA_POD_LOGS_DIR
    std::string container_logs = "/var/log/containers";      ///< GUA_CONTAINER_LOGS_DIR
    std::string docker_root = "/var/lib/docker";             ///< GUA_DOCKER_ROOT
    std::string podman_root = "/var/lib/containers/storage"; ///< GUA_PODMAN_ROOT

    /// The defaults, each replaced by its environment variable when that is set and not empty.
    static NodePaths from_environment();
};

/// Pod and container names for (pod uid, container id); every miss degrades to empty names.
class NodeNames {
  public:
    explicit NodeNames(const NodePaths& paths);
    /// Fills `identity`'s pod_namespace, pod_name and container_name from its pod_uid and
    /// container_id: Kubernetes names when it has a pod uid, else the runtime's container name
    /// (for a rootless Podman container, from the store in the home of its uid's passwd entry).
    /// `now_us` is a monotonic time in µs.
    void name(telemetry::Identity& identity, std::int64_t now_us);

  private:
    PodLogs m_pods;
    RuntimeNames m_runtimes;
};

/// True when `identity` has a pod uid or container id that name() has not named yet.
bool names_missing(const telemetry::Identity& identity);

} // namespace gua::identity

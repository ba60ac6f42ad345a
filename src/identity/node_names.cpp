// SPDX-License-Identifier: Apache-2.0
// NodeNames: the Kubernetes log directories first, the container runtimes' state files after.
#include "identity/node_names.hpp"

#include "identity/user.hpp"

#include <cstdlib>

namespace gua::identity {
namespace {

void from_env(const char* variable, std::string& path) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
        path = value;
    }
}

} // namespace

NodePaths NodePaths::from_environment() {
    NodePaths p;
    from_env("GUA_POD_LOGS_DIR", p.pod_logs);
    from_env("GUA_CONTAINER_LOGS_DIR", p.container_logs);
    from_env("GUA_DOCKER_ROOT", p.docker_root);
    from_env("GUA_PODMAN_ROOT", p.podman_root);
    return p;
}

NodeNames::NodeNames(const NodePaths& paths)
    : m_pods(paths.pod_logs, paths.container_logs),
      m_runtimes(paths.docker_root, paths.podman_root) {}

void NodeNames::name(telemetry::Identity& identity, std::int64_t now_us) {
    if (!identity.pod_uid.empty()) {
        PodNames names = m_pods.lookup(identity.pod_uid, identity.container_id, now_us);
        identity.pod_namespace = std::move(names.pod_namespace);
        identity.pod_name = std::move(names.pod_name);
        identity.container_name = std::move(names.container_name);
        return;
    }
    identity.container_name = m_runtimes.lookup(identity.container_id);
    if (identity.container_name.empty() && identity.uid && *identity.uid != 0 &&
        !identity.container_id.empty()) {
        if (const std::optional<std::string> home = passwd_home(*identity.uid)) {
            identity.container_name = m_runtimes.lookup_rootless(identity.container_id, *home);
        }
    }
}

bool names_missing(const telemetry::Identity& identity) {
    if (!identity.pod_uid.empty()) {
        return identity.pod_name.empty() ||
               (!identity.container_id.empty() && identity.container_name.empty());
    }
    return !identity.container_id.empty() && identity.container_name.empty();
}

} // namespace gua::identity

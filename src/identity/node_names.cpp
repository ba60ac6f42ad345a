// SPDX-License-Identifier: Apache-2.0
// NodeNames: the Kubernetes log directories first, the container runtimes' state files after.
#include "identity/node_names.hpp"

#include "core/clock.hpp"
#include "identity/user.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

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

NodeNames::Files::Files(const NodePaths& paths)
    : pods(paths.pod_logs, paths.container_logs), runtimes(paths.docker_root, paths.podman_root) {}

NodeNames::NodeNames(const NodePaths& paths) : m_files(std::make_shared<Files>(paths)) {}

bool NodeNames::name(telemetry::Identity& identity, std::int64_t now_us,
                     std::string_view claimed_container) {
    if (identity.pod_uid.empty() && identity.container_id.empty() && claimed_container.empty()) {
        return true;
    }
    if (now_us != m_round_us) {
        m_round_us = now_us;
        m_spent_us = 0;
    }
    if (m_spent_us >= k_budget_us || m_worker.busy()) {
        ++m_deferred;
        return false;
    }
    // The job works on copies it shares with the worker: if it is left behind, nothing of this
    // call's is touched later.
    auto found = std::make_shared<telemetry::Identity>(identity);
    const std::string claimed(claimed_container);
    const std::int64_t start = SystemClock().mono_now();
    const bool in_time = m_worker.run(
        [files = m_files, found, claimed, now_us] {
            if (!found->pod_uid.empty() || !found->container_id.empty()) {
                look_up(*files, *found, now_us);
            } else {
                look_up_claimed(*files, *found, claimed, now_us);
            }
        },
        std::max(k_budget_us - m_spent_us, k_min_wait_us));
    m_spent_us += SystemClock().mono_now() - start;
    if (!in_time) {
        ++m_deferred;
        return false;
    }
    identity.pod_namespace = std::move(found->pod_namespace);
    identity.pod_name = std::move(found->pod_name);
    identity.container_name = std::move(found->container_name);
    return true;
}

void NodeNames::look_up(Files& files, telemetry::Identity& identity, std::int64_t now_us) {
    if (!identity.pod_uid.empty()) {
        PodNames names = files.pods.lookup(identity.pod_uid, identity.container_id, now_us);
        identity.pod_namespace = std::move(names.pod_namespace);
        identity.pod_name = std::move(names.pod_name);
        identity.container_name = std::move(names.container_name);
        return;
    }
    identity.container_name = files.runtimes.lookup(identity.container_id, now_us);
}

void NodeNames::look_up_claimed(Files& files, telemetry::Identity& identity,
                                const std::string& claimed, std::int64_t now_us) {
    // Only from the user's own store, so that claiming a system container's id never borrows
    // its name.
    if (identity.uid && *identity.uid != 0) {
        if (const std::optional<std::string> home = passwd_home(*identity.uid)) {
            identity.container_name =
                files.runtimes.lookup_rootless(claimed, *home, *identity.uid, now_us);
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

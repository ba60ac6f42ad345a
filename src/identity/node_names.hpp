// SPDX-License-Identifier: Apache-2.0
// Names the node gives a process's pod and container: Kubernetes namespace, pod and container from
// the kubelet's log directories, else the Docker or Podman container name.
#pragma once

#include "core/deadline_worker.hpp"
#include "identity/pod_logs.hpp"
#include "identity/runtime_names.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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
/// The files are read on a worker thread (DeadlineWorker): a file system that stalls (a home on
/// NFS or FUSE) holds that thread, never the caller's tick.
class NodeNames {
  public:
    explicit NodeNames(const NodePaths& paths);
    /// Fills `identity`'s pod_namespace, pod_name and container_name from its pod_uid and
    /// container_id: Kubernetes names when it has a pod uid, else the runtime's container name
    /// from Docker's or the system Podman store. `claimed_container` is a container id its user
    /// claims (a cgroup under user.slice: rootless Podman, or a forgery): named only from the
    /// store in the home of the identity's uid (passwd), never from the system's.
    /// `now_us` is a monotonic time in µs. Lookups of one round (one `now_us`) stop once they
    /// took k_budget_us: the names of the identities left stay missing (names_missing()), to be
    /// looked up again later. A lookup that outlasts what is left of the budget goes on on the
    /// worker, and until it ends every lookup is skipped (the node's files are stalled); a
    /// lookup it finished late filled the caches, so the next try is quick. Returns false when
    /// the budget or a stalled lookup skipped this one, or it did not end in time.
    bool name(telemetry::Identity& identity, std::int64_t now_us,
              std::string_view claimed_container = {});
    /// Time the node's files may take per round (per tick) at most.
    static constexpr std::int64_t k_budget_us = 100'000;
    /// The least time a lookup is waited for, even when the round's budget is almost spent.
    static constexpr std::int64_t k_min_wait_us = 20'000;
    /// Lookups skipped because the round's budget was spent or a lookup was stalled, or not
    /// finished in time, since construction.
    std::uint64_t deferred() const { return m_deferred; }
    /// Lookups that did not finish in time (a stalled or very slow file system), since
    /// construction.
    std::uint64_t late() const { return m_worker.late(); }
    /// True while a lookup that did not end in time still runs (every lookup is skipped then).
    bool stalled() const { return m_worker.busy(); }

  private:
    /// The caches of the node's files; only the worker's job touches them.
    struct Files {
        explicit Files(const NodePaths& paths);
        PodLogs pods;
        RuntimeNames runtimes;
    };
    static void look_up(Files& files, telemetry::Identity& identity, std::int64_t now_us);
    static void look_up_claimed(Files& files, telemetry::Identity& identity,
                                const std::string& claimed, std::int64_t now_us);

    std::shared_ptr<Files> m_files;
    DeadlineWorker m_worker;      ///< after m_files: destroyed (detached) first
    std::int64_t m_round_us = -1; ///< the `now_us` of the current round
    std::int64_t m_spent_us = 0;  ///< time its lookups took
    std::uint64_t m_deferred = 0;
};

/// True when `identity` has a pod uid or container id that name() has not named yet.
bool names_missing(const telemetry::Identity& identity);

} // namespace gua::identity

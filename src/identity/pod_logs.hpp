// SPDX-License-Identifier: Apache-2.0
// Kubernetes names from the node itself: the kubelet's pod log directories
// (<root>/<namespace>_<pod>_<uid>/<container>/) and container log links (<name>-<id>.log).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gua::identity {

/// A pod log directory's name split: "<namespace>_<pod>_<uid>".
struct PodDirName {
    std::string pod_namespace;
    std::string pod_name;
    std::string pod_uid;

    friend bool operator==(const PodDirName&, const PodDirName&) = default;
};

/// Splits a pod log directory name; nullopt unless it has exactly two '_' with three non-empty
/// parts and a uid of hex digits and '-' (the legacy "<uid>" form names nothing).
std::optional<PodDirName> parse_pod_dir_name(std::string_view name);

/// A container log link's name split: "<pod>_<namespace>_<container>-<64 hex id>.log".
struct ContainerLogName {
    std::string pod_name;
    std::string pod_namespace;
    std::string container_name;
    std::string container_id;

    friend bool operator==(const ContainerLogName&, const ContainerLogName&) = default;
};

/// Splits a container log link name; nullopt for any other name (including one the kubelet cut
/// to 255 bytes, which lost the end of its id).
std::optional<ContainerLogName> parse_container_log_name(std::string_view name);

/// The names the node gives a pod and one of its containers; empty when not known.
struct PodNames {
    std::string pod_namespace;
    std::string pod_name;
    std::string container_name;
};

/// Reads the kubelet's log directories under `pod_logs` (default /var/log/pods) and
/// `container_logs` (default /var/log/containers). A lookup reads a directory only when the
/// pod (or container) is not in its cache and the directory changed since it was last read
/// (its mtime) or `k_rescan_us` passed; a missing or unreadable directory gives no names, never
/// an error. Not thread-safe.
class PodLogs {
  public:
    /// A directory whose mtime did not change is read again after this long at the latest
    /// (mtimes can be coarser than the creation of two entries).
    static constexpr std::int64_t k_rescan_us = 10'000'000;

    PodLogs(std::string pod_logs, std::string container_logs);
    /// Names of pod `pod_uid` and, when the node's layout says it, of its container
    /// `container_id` (which may be empty): from the container log link of that id when it
    /// points into this pod's directory, else the only container directory of the pod.
    /// `now_us` is a monotonic time in µs.
    PodNames lookup(const std::string& pod_uid, const std::string& container_id,
                    std::int64_t now_us);

  private:
    struct Pod {
        std::string pod_namespace;
        std::string pod_name;
        std::string dir; ///< directory name under the pod log root
    };
    struct Link {
        ContainerLogName name;
        std::string file; ///< file name under the container log root
    };
    /// A directory read into a map, and when.
    struct Scan {
        std::optional<std::int64_t> mtime_ns; ///< of the directory at the last read
        std::int64_t read_us = 0;
        bool done = false;
    };
    /// True when `dir` should be read again for a missing entry (and records the attempt).
    static bool stale(const std::string& dir, Scan& scan, std::int64_t now_us);
    void scan_pods();
    void scan_links();
    /// The container name of `container_id` in `pod`, or empty.
    std::string container_of(const Pod& pod, const std::string& pod_uid,
                             const std::string& container_id, std::int64_t now_us);

    std::string m_pod_logs;
    std::string m_container_logs;
    Scan m_pod_scan;
    Scan m_link_scan;
    std::unordered_map<std::string, Pod> m_pods;   ///< by pod uid
    std::unordered_map<std::string, Link> m_links; ///< by container id
    /// Container names found, by container id (a container never changes pods or names).
    std::unordered_map<std::string, std::string> m_named;
};

} // namespace gua::identity

// SPDX-License-Identifier: Apache-2.0
// Container names outside Kubernetes, from the runtimes' state files on the node: Docker's
// <data-root>/containers/<id>/config.v2.json and Podman's <graph root>/<driver>-containers/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gua::identity {

/// The "Name" of a Docker config.v2.json text without its leading '/'; empty when absent or the
/// text is not JSON.
std::string docker_name_of(std::string_view config_json);

/// Fills `out` with id → first name of a containers/storage containers.json text (a JSON array of
/// {"id", "names"}); false when the text is not such an array.
bool podman_names_of(std::string_view containers_json,
                     std::unordered_map<std::string, std::string>& out);

/// Container names from Docker's data root (default /var/lib/docker) and Podman's graph roots: the
/// system one (default /var/lib/containers/storage) and, for a rootless container, its owner's
/// (~/.local/share/containers/storage). Cached by id; a Podman store is read again only when one
/// of its files changed. A missing or unreadable file gives no name. Not thread-safe.
class RuntimeNames {
  public:
    RuntimeNames(std::string docker_root, std::string podman_root);
    /// The name of container `container_id`: Docker's, else the system Podman store's; empty
    /// when neither names it.
    std::string lookup(const std::string& container_id);
    /// The name of rootless Podman container `container_id` from the store under `owner_home`
    /// (~/.local/share/containers/storage); empty when it does not name it.
    std::string lookup_rootless(const std::string& container_id, const std::string& owner_home);

  private:
    /// One Podman graph root's names, with the mtimes of the files they came from.
    struct Store {
        std::unordered_map<std::string, std::string> names;
        std::string stamp; ///< paths and mtimes of the containers.json files read
    };
    std::string docker(const std::string& container_id) const;
    std::string podman(const std::string& root, const std::string& container_id);
    /// Remembers `name` (when not empty) as the name of `container_id` and returns it.
    std::string remember(const std::string& container_id, std::string name);

    std::string m_docker_root;
    std::string m_podman_root;
    std::unordered_map<std::string, std::string> m_named; ///< by container id
    std::unordered_map<std::string, Store> m_stores;      ///< by graph root
};

} // namespace gua::identity

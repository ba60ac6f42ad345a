// SPDX-License-Identifier: Apache-2.0
// Container names outside Kubernetes, from the runtimes' state files on the node: Docker's
// <data-root>/containers/<id>/config.v2.json and Podman's <graph root>/<driver>-containers/.
#pragma once

#include "identity/untrusted_file.hpp"

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
/// (~/.local/share/containers/storage). Cached by id; a Podman store is read again at most every
/// k_store_reread_us, and only when one of its files changed. Every file is read as an untrusted
/// one (identity/untrusted_file.hpp: no symbolic link followed, regular files only, bounded
/// sizes); beneath a home, every directory and file must also belong to the home's owner. A
/// missing, refused or unreadable file gives no name. Not thread-safe.
class RuntimeNames {
  public:
    /// Largest Docker config.v2.json read.
    static constexpr std::size_t k_max_docker_config = 4 * 1024 * 1024;
    /// Largest containers.json of the system Podman store read.
    static constexpr std::size_t k_max_podman_store = 64 * 1024 * 1024;
    /// Largest containers.json of a user's (rootless) Podman store read.
    static constexpr std::size_t k_max_rootless_store = 4 * 1024 * 1024;
    /// Entries of a graph root read at most, and "<driver>-containers" directories used at most.
    static constexpr std::size_t k_max_store_entries = 1024;
    static constexpr std::size_t k_max_store_dirs = 8;
    /// A Podman store is looked at again (stat of its files) at most this often.
    static constexpr std::int64_t k_store_reread_us = 10'000'000;

    RuntimeNames(std::string docker_root, std::string podman_root);
    /// The name of container `container_id`: Docker's, else the system Podman store's; empty
    /// when neither names it. `now_us` is a monotonic time in µs.
    std::string lookup(const std::string& container_id, std::int64_t now_us);
    /// The name of rootless Podman container `container_id` from the store under `owner_home`
    /// (~/.local/share/containers/storage, all of it owned by `owner`); empty when it does not
    /// name it.
    std::string lookup_rootless(const std::string& container_id, const std::string& owner_home,
                                uid_t owner, std::int64_t now_us);

  private:
    /// One Podman graph root's names, with the mtimes of the files they came from.
    struct Store {
        std::unordered_map<std::string, std::string> names;
        std::string stamp;                   ///< paths and mtimes of the containers.json files read
        std::optional<std::int64_t> read_us; ///< when it was last looked at
    };
    std::string docker(const std::string& container_id) const;
    std::string podman(const std::string& root, const std::string& container_id, Owner owner,
                       std::int64_t now_us);
    /// Reads the store at `root` again when its files changed (beneath a home when `owner`).
    void reread(Store& store, const std::string& root, Owner owner) const;
    /// Remembers `name` (when not empty) as the name of `container_id` and returns it.
    std::string remember(const std::string& container_id, std::string name);

    std::string m_docker_root;
    std::string m_podman_root;
    std::unordered_map<std::string, std::string> m_named; ///< by container id
    std::unordered_map<std::string, Store> m_stores;      ///< by graph root (or home)
};

} // namespace gua::identity

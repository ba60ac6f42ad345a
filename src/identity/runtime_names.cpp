// SPDX-License-Identifier: Apache-2.0
// Docker and Podman container names from their state files, parsed with nlohmann::json.
#include "identity/runtime_names.hpp"

#include "identity/untrusted_file.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace gua::identity {
namespace {

constexpr std::size_t k_max_cached = 4096;
constexpr const char* k_rootless_store = ".local/share/containers/storage";

/// The state files of a containers/storage graph root open at `root`: containers.json and
/// volatile-containers.json of each "<driver>-containers" directory, at most
/// RuntimeNames::k_max_store_dirs of them among the first k_max_store_entries entries.
std::vector<std::pair<std::string, std::string>> store_files(int root) {
    std::vector<std::pair<std::string, std::string>> files;
    DirListing listing = list_dir_bounded(root, RuntimeNames::k_max_store_entries);
    std::sort(listing.names.begin(), listing.names.end()); // readdir's order is not stable
    for (const std::string& name : listing.names) {
        if (name.size() > std::string_view("-containers").size() && name.ends_with("-containers") &&
            files.size() < 2 * RuntimeNames::k_max_store_dirs) {
            files.emplace_back(name, "containers.json");
            files.emplace_back(name, "volatile-containers.json");
        }
    }
    return files;
}

/// "<dir>/<file>:<mtime>:<size>;" of a store file, without following a link or blocking; empty
/// when it is missing.
std::string stamp_of(int root, const std::pair<std::string, std::string>& file) {
    const std::string rel = file.first + '/' + file.second;
    struct statx st {};
    if (::statx(root, rel.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                STATX_MTIME | STATX_SIZE, &st) != 0) {
        return {};
    }
    return fmt::format("{}:{}.{}:{};", rel, st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec, st.stx_size);
}

} // namespace

std::string docker_name_of(std::string_view config_json) {
    const nlohmann::json j = nlohmann::json::parse(config_json, nullptr, false);
    if (!j.is_object()) {
        return {};
    }
    const auto it = j.find("Name");
    if (it == j.end() || !it->is_string()) {
        return {};
    }
    std::string name = it->get<std::string>();
    return name.starts_with('/') ? name.substr(1) : name;
}

bool podman_names_of(std::string_view containers_json,
                     std::unordered_map<std::string, std::string>& out) {
    const nlohmann::json j = nlohmann::json::parse(containers_json, nullptr, false);
    if (!j.is_array()) {
        return false;
    }
    for (const nlohmann::json& c : j) {
        if (!c.is_object()) {
            continue;
        }
        const auto id = c.find("id");
        const auto names = c.find("names");
        if (id != c.end() && id->is_string() && names != c.end() && names->is_array() &&
            !names->empty() && names->front().is_string()) {
            out.insert_or_assign(id->get<std::string>(), names->front().get<std::string>());
        }
    }
    return true;
}

RuntimeNames::RuntimeNames(std::string docker_root, std::string podman_root)
    : m_docker_root(std::move(docker_root)), m_podman_root(std::move(podman_root)) {}

std::string RuntimeNames::docker(const std::string& container_id) const {
    const Result<std::string> text = read_untrusted_path(
        m_docker_root + "/containers/" + container_id + "/config.v2.json", k_max_docker_config);
    return text ? docker_name_of(text.value()) : std::string{};
}

std::string RuntimeNames::podman(const std::string& root, const std::string& container_id,
                                 Owner owner, std::int64_t now_us) {
    Store& store = m_stores[root];
    if (!store.read_us || now_us - *store.read_us >= k_store_reread_us) {
        store.read_us = now_us;
        reread(store, root, owner);
    }
    const auto it = store.names.find(container_id);
    return it == store.names.end() ? std::string{} : it->second;
}

void RuntimeNames::reread(Store& store, const std::string& root, Owner owner) const {
    // A rootless store: the home is the administrator's path, what lies beneath it the user's.
    Result<UniqueFd> dir = open_trusted_dir(root);
    if (dir && owner) {
        dir = open_dir_beneath(dir.value().get(), k_rootless_store, owner);
    }
    if (!dir) {
        store.names.clear();
        store.stamp.clear();
        return;
    }
    const std::vector<std::pair<std::string, std::string>> files = store_files(dir.value().get());
    std::string stamp;
    for (const auto& file : files) {
        stamp += stamp_of(dir.value().get(), file);
    }
    if (stamp == store.stamp) {
        return;
    }
    store.names.clear();
    store.stamp = std::move(stamp);
    const std::size_t max_bytes = owner ? k_max_rootless_store : k_max_podman_store;
    for (const auto& [sub, name] : files) {
        const Result<UniqueFd> sub_dir = open_dir_beneath(dir.value().get(), sub, owner);
        if (!sub_dir) {
            continue;
        }
        if (const Result<std::string> text =
                read_untrusted_file(sub_dir.value().get(), name, max_bytes, owner)) {
            podman_names_of(text.value(), store.names);
        }
    }
}

std::string RuntimeNames::remember(const std::string& container_id, std::string name) {
    if (!name.empty()) {
        if (m_named.size() >= k_max_cached) {
            m_named.clear();
        }
        m_named.emplace(container_id, name);
    }
    return name;
}

std::string RuntimeNames::lookup(const std::string& container_id, std::int64_t now_us) {
    if (container_id.empty()) {
        return {};
    }
    if (const auto known = m_named.find(container_id); known != m_named.end()) {
        return known->second;
    }
    std::string name = docker(container_id);
    if (name.empty()) {
        name = podman(m_podman_root, container_id, std::nullopt, now_us);
    }
    return remember(container_id, std::move(name));
}

std::string RuntimeNames::lookup_rootless(const std::string& container_id,
                                          const std::string& owner_home, uid_t owner,
                                          std::int64_t now_us) {
    if (container_id.empty() || owner_home.empty()) {
        return {};
    }
    if (const auto known = m_named.find(container_id); known != m_named.end()) {
        return known->second;
    }
    if (m_stores.size() >= k_max_cached && !m_stores.contains(owner_home)) {
        m_stores.clear();
    }
    return remember(container_id, podman(owner_home, container_id, owner, now_us));
}

} // namespace gua::identity

// SPDX-License-Identifier: Apache-2.0
// Docker and Podman container names from their state files, parsed with nlohmann::json.
#include "identity/runtime_names.hpp"

#include "identity/proc_file.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <dirent.h>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace gua::identity {
namespace {

constexpr std::size_t k_max_docker_config = 4 * 1024 * 1024;
constexpr std::size_t k_max_podman_store = 64 * 1024 * 1024;
constexpr std::size_t k_max_cached = 4096;

/// The containers.json files of a containers/storage graph root: one per "<driver>-containers"
/// directory, plus its volatile-containers.json.
std::vector<std::string> store_files(const std::string& root) {
    std::vector<std::string> files;
    DIR* dir = ::opendir(root.c_str());
    if (dir == nullptr) {
        return files;
    }
    while (const dirent* e = ::readdir(dir)) {
        const std::string_view name = e->d_name;
        if (name.size() > std::string_view("-containers").size() && name.ends_with("-containers")) {
            const std::string base = root + '/' + std::string(name);
            files.push_back(base + "/containers.json");
            files.push_back(base + "/volatile-containers.json");
        }
    }
    ::closedir(dir);
    std::sort(files.begin(), files.end()); // readdir's order is not stable
    return files;
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
    const Result<std::string> text = read_proc_file(
        m_docker_root + "/containers/" + container_id + "/config.v2.json", k_max_docker_config);
    return text ? docker_name_of(text.value()) : std::string{};
}

std::string RuntimeNames::podman(const std::string& root, const std::string& container_id) {
    const std::vector<std::string> files = store_files(root);
    std::string stamp;
    for (const std::string& file : files) {
        struct stat st {};
        if (::stat(file.c_str(), &st) == 0) {
            stamp += fmt::format("{}:{}.{}:{};", file, st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                                 st.st_size);
        }
    }
    Store& store = m_stores[root];
    if (store.stamp != stamp) {
        store.names.clear();
        for (const std::string& file : files) {
            if (const Result<std::string> text = read_proc_file(file, k_max_podman_store)) {
                podman_names_of(text.value(), store.names);
            }
        }
        store.stamp = std::move(stamp);
    }
    const auto it = store.names.find(container_id);
    return it == store.names.end() ? std::string{} : it->second;
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

std::string RuntimeNames::lookup(const std::string& container_id) {
    if (container_id.empty()) {
        return {};
    }
    if (const auto known = m_named.find(container_id); known != m_named.end()) {
        return known->second;
    }
    std::string name = docker(container_id);
    if (name.empty()) {
        name = podman(m_podman_root, container_id);
    }
    return remember(container_id, std::move(name));
}

std::string RuntimeNames::lookup_rootless(const std::string& container_id,
                                          const std::string& owner_home) {
    if (container_id.empty() || owner_home.empty()) {
        return {};
    }
    if (const auto known = m_named.find(container_id); known != m_named.end()) {
        return known->second;
    }
    return remember(container_id,
                    podman(owner_home + "/.local/share/containers/storage", container_id));
}

} // namespace gua::identity

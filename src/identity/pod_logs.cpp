// SPDX-License-Identifier: Apache-2.0
// Kubernetes names from the kubelet's log directories, read with opendir/readdir and cached.
#include "identity/pod_logs.hpp"

#include <algorithm>
#include <array>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gua::identity {
namespace {

constexpr std::size_t k_log_id_length = 64; // a runtime container id: 64 hex digits
constexpr std::size_t k_max_cached_containers = 4096;

bool is_hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/// Splits `text` at '_' into exactly `n` non-empty parts; empty when it has another count.
std::vector<std::string_view> split_exactly(std::string_view text, std::size_t n) {
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < n) {
        const std::size_t at = text.find('_');
        if (at == std::string_view::npos) {
            return {};
        }
        parts.push_back(text.substr(0, at));
        text.remove_prefix(at + 1);
    }
    parts.push_back(text);
    const bool ok =
        text.find('_') == std::string_view::npos &&
        std::none_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); });
    return ok ? parts : std::vector<std::string_view>{};
}

/// The entries of directory `path` (without "." and ".."), with their d_type; empty when it
/// cannot be read.
std::vector<std::pair<std::string, unsigned char>> list_dir(const std::string& path) {
    std::vector<std::pair<std::string, unsigned char>> out;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
        return out;
    }
    while (const dirent* e = ::readdir(dir)) {
        const std::string_view name = e->d_name;
        if (name != "." && name != "..") {
            out.emplace_back(std::string(name), e->d_type);
        }
    }
    ::closedir(dir);
    return out;
}

bool is_dir(const std::string& path, unsigned char type) {
    if (type != DT_UNKNOWN) {
        return type == DT_DIR;
    }
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The target of symbolic link `path`; empty when it is not one or cannot be read.
std::string read_link(const std::string& path) {
    std::array<char, 4096> buffer{};
    const ssize_t n = ::readlink(path.c_str(), buffer.data(), buffer.size());
    return n > 0 && static_cast<std::size_t>(n) < buffer.size()
               ? std::string(buffer.data(), static_cast<std::size_t>(n))
               : std::string{};
}

/// The pod directory and container directory a container log link points to:
/// ".../<namespace>_<pod>_<uid>/<container>/<n>.log".
std::optional<std::pair<PodDirName, std::string>> link_target(std::string_view target) {
    std::array<std::string_view, 3> last{};
    for (std::size_t i = 0; i < last.size(); ++i) {
        const std::size_t slash = target.rfind('/');
        if (slash == std::string_view::npos) {
            return std::nullopt;
        }
        last[i] = target.substr(slash + 1);
        target = target.substr(0, slash);
    }
    std::optional<PodDirName> pod = parse_pod_dir_name(last[2]);
    if (!pod || last[1].empty()) {
        return std::nullopt;
    }
    return std::pair{std::move(*pod), std::string(last[1])};
}

} // namespace

std::optional<PodDirName> parse_pod_dir_name(std::string_view name) {
    const std::vector<std::string_view> parts = split_exactly(name, 3);
    if (parts.empty() || !std::all_of(parts[2].begin(), parts[2].end(),
                                      [](char c) { return is_hex_digit(c) || c == '-'; })) {
        return std::nullopt;
    }
    return PodDirName{std::string(parts[0]), std::string(parts[1]), std::string(parts[2])};
}

std::optional<ContainerLogName> parse_container_log_name(std::string_view name) {
    constexpr std::string_view suffix = ".log";
    if (!name.ends_with(suffix) || name.size() < suffix.size() + k_log_id_length + 2) {
        return std::nullopt;
    }
    name.remove_suffix(suffix.size());
    const std::string_view id = name.substr(name.size() - k_log_id_length);
    name.remove_suffix(k_log_id_length);
    if (!name.ends_with('-') || !std::all_of(id.begin(), id.end(), is_hex_digit)) {
        return std::nullopt;
    }
    name.remove_suffix(1);
    const std::vector<std::string_view> parts = split_exactly(name, 3);
    if (parts.empty()) {
        return std::nullopt;
    }
    return ContainerLogName{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
                            std::string(id)};
}

PodLogs::PodLogs(std::string pod_logs, std::string container_logs)
    : m_pod_logs(std::move(pod_logs)), m_container_logs(std::move(container_logs)) {}

bool PodLogs::stale(const std::string& dir, Scan& scan, std::int64_t now_us) {
    struct stat st {};
    std::optional<std::int64_t> mtime;
    if (::stat(dir.c_str(), &st) == 0) {
        mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    }
    if (scan.done && mtime == scan.mtime_ns && now_us - scan.read_us < k_rescan_us) {
        return false;
    }
    scan.done = true;
    scan.mtime_ns = mtime;
    scan.read_us = now_us;
    return true;
}

void PodLogs::scan_pods() {
    m_pods.clear();
    for (auto& [name, type] : list_dir(m_pod_logs)) {
        if (std::optional<PodDirName> pod = parse_pod_dir_name(name)) {
            m_pods.insert_or_assign(
                std::move(pod->pod_uid),
                Pod{std::move(pod->pod_namespace), std::move(pod->pod_name), std::move(name)});
        }
    }
}

void PodLogs::scan_links() {
    m_links.clear();
    for (auto& [name, type] : list_dir(m_container_logs)) {
        if (std::optional<ContainerLogName> link = parse_container_log_name(name)) {
            std::string id = link->container_id;
            m_links.insert_or_assign(std::move(id), Link{std::move(*link), std::move(name)});
        }
    }
}

std::string PodLogs::container_of(const Pod& pod, const std::string& pod_uid,
                                  const std::string& container_id, std::int64_t now_us) {
    if (!container_id.empty()) {
        auto link = m_links.find(container_id);
        if (link == m_links.end() && stale(m_container_logs, m_link_scan, now_us)) {
            scan_links();
            link = m_links.find(container_id);
        }
        if (link != m_links.end()) {
            const ContainerLogName& n = link->second.name;
            if (n.pod_namespace != pod.pod_namespace || n.pod_name != pod.pod_name) {
                return {}; // the id names a container of another pod: no name rather than a wrong
                           // one
            }
            const auto target = link_target(read_link(m_container_logs + '/' + link->second.file));
            if (target &&
                (target->first.pod_uid != pod_uid || target->second != n.container_name)) {
                return {}; // a pod of the same name that was deleted and created again
            }
            return n.container_name;
        }
    }
    // The pod's own directory: a log file that links to a file naming the id (Docker through
    // cri-dockerd), else its only container.
    const std::string dir = m_pod_logs + '/' + pod.dir;
    std::vector<std::string> containers;
    for (const auto& [name, type] : list_dir(dir)) {
        const std::string path = dir + '/' + name;
        if (!is_dir(path, type)) {
            continue;
        }
        containers.push_back(name);
        if (container_id.empty()) {
            continue;
        }
        for (const auto& [file, file_type] : list_dir(path)) {
            if (file_type == DT_LNK || file_type == DT_UNKNOWN) {
                if (read_link(path + '/' + file).find(container_id) != std::string::npos) {
                    return name;
                }
            }
        }
    }
    return containers.size() == 1 ? containers.front() : std::string{};
}

PodNames PodLogs::lookup(const std::string& pod_uid, const std::string& container_id,
                         std::int64_t now_us) {
    if (pod_uid.empty()) {
        return {};
    }
    auto pod = m_pods.find(pod_uid);
    if (pod == m_pods.end() && stale(m_pod_logs, m_pod_scan, now_us)) {
        scan_pods();
        pod = m_pods.find(pod_uid);
    }
    if (pod == m_pods.end()) {
        return {};
    }
    PodNames names{pod->second.pod_namespace, pod->second.pod_name, {}};
    if (const auto known = m_named.find(container_id); known != m_named.end()) {
        names.container_name = known->second;
        return names;
    }
    names.container_name = container_of(pod->second, pod_uid, container_id, now_us);
    if (!container_id.empty() && !names.container_name.empty()) {
        if (m_named.size() >= k_max_cached_containers) {
            m_named.clear();
        }
        m_named.emplace(container_id, names.container_name);
    }
    return names;
}

} // namespace gua::identity

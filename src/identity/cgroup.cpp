// SPDX-License-Identifier: Apache-2.0
// Pure parser for /proc/<pid>/cgroup: container id, Kubernetes pod, Slurm job and systemd unit.
#include "identity/cgroup.hpp"

#include "alloc/slurm_cgroup.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace gua::identity {
namespace {

constexpr std::size_t k_container_id_length = 64;
// systemd scope prefixes that container runtimes use: "<prefix><64 hex>.scope".
constexpr std::array<std::string_view, 5> k_container_scope_prefixes = {
    "docker-", "cri-containerd-", "crio-", "libpod-", "nerdctl-"};

bool is_lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_container_id(std::string_view text) {
    return text.size() == k_container_id_length &&
           std::all_of(text.begin(), text.end(), is_lower_hex);
}

// The container id a path component names: a bare 64-hex id or a runtime's "<prefix><id>.scope".
std::string_view container_id_of(std::string_view component) {
    if (is_container_id(component)) {
        return component;
    }
    if (!component.ends_with(".scope")) {
        return {};
    }
    component.remove_suffix(std::string_view(".scope").size());
    for (std::string_view prefix : k_container_scope_prefixes) {
        if (component.starts_with(prefix) && is_container_id(component.substr(prefix.size()))) {
            return component.substr(prefix.size());
        }
    }
    return {};
}

// dcgm-exporter's rule: the leftmost "pod([a-f0-9_-]+)" in the component, '_' turned into '-'.
std::string pod_uid_of(std::string_view component) {
    for (std::size_t at = component.find("pod"); at != std::string_view::npos;
         at = component.find("pod", at + 1)) {
        std::size_t end = at + 3;
        while (end < component.size() &&
               (is_lower_hex(component[end]) || component[end] == '_' || component[end] == '-')) {
            ++end;
        }
        if (end > at + 3) {
            std::string uid(component.substr(at + 3, end - at - 3));
            std::replace(uid.begin(), uid.end(), '_', '-');
            return uid;
        }
    }
    return {};
}

// "job_<digits>" → the digits, else empty.
std::string_view slurm_job_of(std::string_view component) {
    constexpr std::string_view prefix = "job_";
    if (!component.starts_with(prefix) || component.size() == prefix.size()) {
        return {};
    }
    const std::string_view digits = component.substr(prefix.size());
    return std::all_of(digits.begin(), digits.end(), is_digit) ? digits : std::string_view{};
}

/// A whole pod uid: a UUID (36 characters, '-' or '_' at 8, 13, 18 and 23, hex elsewhere), or 32
/// hex digits (a static pod's manifest hash).
bool is_pod_uid(std::string_view uid) {
    if (uid.size() == 32) {
        return std::all_of(uid.begin(), uid.end(), is_lower_hex);
    }
    if (uid.size() != 36) {
        return false;
    }
    for (std::size_t i = 0; i < uid.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? (uid[i] != '-' && uid[i] != '_') : !is_lower_hex(uid[i])) {
            return false;
        }
    }
    return true;
}

/// The pod uid of a component seen in a path relative to the reader's cgroup namespace (its
/// "kubepods" ancestors hidden): only "pod<uid>" or "kubepods[-<qos>]-pod<uid>.slice" with a
/// whole uid.
std::string relative_pod_uid_of(std::string_view component) {
    if (component.starts_with("kubepods") && component.ends_with(".slice")) {
        const std::size_t at = component.rfind("-pod");
        if (at == std::string_view::npos) {
            return {};
        }
        component = component.substr(at + 1, component.size() - at - 1 - 6);
    }
    if (!component.starts_with("pod") || !is_pod_uid(component.substr(3))) {
        return {};
    }
    std::string uid(component.substr(3));
    std::replace(uid.begin(), uid.end(), '_', '-');
    return uid;
}

std::vector<std::string_view> split_path(std::string_view path) {
    std::vector<std::string_view> parts;
    while (!path.empty()) {
        const std::size_t slash = path.find('/');
        const std::string_view part = path.substr(0, slash);
        if (!part.empty() && part != "." && part != "..") {
            parts.push_back(part);
        }
        if (slash == std::string_view::npos) {
            break;
        }
        path.remove_prefix(slash + 1);
    }
    return parts;
}

/// A component below which a user creates cgroups: systemd's user.slice (sessions, and the
/// delegated subtree of each user@<uid>.service).
bool is_user_subtree(std::string_view component) {
    return component == "user.slice" ||
           (component.starts_with("user@") && component.ends_with(".service")) ||
           (component.starts_with("user-") && component.ends_with(".slice"));
}

void fill_missing(CgroupFacts& into, const CgroupFacts& from) {
    if (into.container_id.empty()) {
        into.user_claimed = from.user_claimed;
    }
    for (auto member : {&CgroupFacts::container_id, &CgroupFacts::pod_uid, &CgroupFacts::slurm_job,
                        &CgroupFacts::systemd_unit}) {
        if ((into.*member).empty()) {
            into.*member = from.*member;
        }
    }
}

} // namespace

CgroupFacts parse_cgroup_path(std::string_view path) {
    CgroupFacts facts;
    bool under_kubepods = false;
    bool under_slurm = false;
    bool under_user = false; // what lies below is the user's to create
    // "/../.." : relative to the reader's cgroup namespace (gua in a container of its own), so
    // the kubepods ancestors may be above what the path shows.
    const bool relative = path.starts_with("/..");
    for (std::string_view part : split_path(path)) {
        under_user = under_user || is_user_subtree(part);
        under_kubepods =
            !under_user && (under_kubepods || part.find("kubepods") != std::string_view::npos);
        under_slurm = !under_user && (under_slurm || part.find("slurm") != std::string_view::npos);
        if (const std::string_view id = container_id_of(part); !id.empty()) {
            facts.container_id = id; // the innermost container wins (e.g. kind nodes)
            facts.user_claimed = under_user;
            if (under_user && part.ends_with(".scope")) {
                facts.systemd_unit = part; // the user's own scope, whatever it claims
            }
            continue;
        }
        if (under_kubepods && facts.pod_uid.empty()) {
            facts.pod_uid = pod_uid_of(part);
        } else if (relative && !under_user && facts.pod_uid.empty()) {
            facts.pod_uid = relative_pod_uid_of(part);
        }
        if (under_slurm && facts.slurm_job.empty()) {
            facts.slurm_job = slurm_job_of(part);
        }
        if (part.ends_with(".service") || part.ends_with(".scope")) {
            facts.systemd_unit = part;
        }
    }
    // Slurm 26.05 SLUID directories too; never from a path a user could create (under_user).
    if (facts.slurm_job.empty() && !under_user) {
        facts.slurm_job = alloc::slurm_job_label(path);
    }
    return facts;
}

CgroupFacts parse_cgroup(std::string_view content) {
    struct Line {
        int rank; // 0: v2, 1: v1 name=systemd, 2: other v1
        std::string_view path;
    };
    std::vector<Line> lines;
    while (!content.empty()) {
        const std::size_t newline = content.find('\n');
        const std::string_view line = content.substr(0, newline);
        content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
        const std::size_t first = line.find(':');
        const std::size_t second =
            first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos || !line.substr(second + 1).starts_with('/')) {
            continue;
        }
        const std::string_view id = line.substr(0, first);
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const int rank = (id == "0" && controllers.empty()) ? 0
                         : controllers == "name=systemd"    ? 1
                                                            : 2;
        lines.push_back({rank, line.substr(second + 1)});
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Line& a, const Line& b) { return a.rank < b.rank; });
    CgroupFacts facts;
    for (const Line& line : lines) {
        fill_missing(facts, parse_cgroup_path(line.path));
    }
    return facts;
}

} // namespace gua::identity

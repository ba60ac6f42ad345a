// SPDX-License-Identifier: Apache-2.0
// Real cgroups for tests: finding the mount, making a per-test subtree, removing it.
#include "support/cgroup_tree.hpp"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace gua::test {

namespace fs = std::filesystem;

std::optional<fs::path> find_cgroup_mount(const std::string& v1_option) {
    std::ifstream mountinfo("/proc/self/mountinfo");
    for (std::string line; std::getline(mountinfo, line);) {
        const std::size_t dash = line.find(" - ");
        if (dash == std::string::npos) {
            continue;
        }
        std::istringstream head(line.substr(0, dash));
        std::istringstream tail(line.substr(dash + 3));
        std::string id, parent, dev, root, mount_point, fstype, source, options;
        head >> id >> parent >> dev >> root >> mount_point;
        tail >> fstype >> source >> options;
        const bool wanted =
            v1_option.empty()
                ? fstype == "cgroup2"
                : fstype == "cgroup" &&
                      ("," + options + ",").find("," + v1_option + ",") != std::string::npos;
        if (wanted && root == "/") {
            return fs::path(mount_point);
        }
    }
    return std::nullopt;
}

CgroupTree::CgroupTree(const fs::path& mount, const std::string& prefix)
    : m_base(mount / (prefix + "-" + std::to_string(::getpid()))) {}

CgroupTree::~CgroupTree() {
    for (auto it = m_made.rbegin(); it != m_made.rend(); ++it) {
        // Freeing a cgroup can lag its last process's exit by a moment.
        for (int attempt = 0; attempt < 100 && ::rmdir(it->c_str()) != 0 && errno == EBUSY;
             ++attempt) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

bool CgroupTree::make(const std::string& relative) {
    fs::path dir = m_base;
    if (!make_one(dir)) {
        return false;
    }
    for (const auto& part : fs::path(relative)) {
        dir /= part;
        if (!make_one(dir)) {
            return false;
        }
    }
    m_leaf = dir;
    return true;
}

bool CgroupTree::move(pid_t pid) {
    std::ofstream procs(m_leaf / "cgroup.procs");
    procs << pid << std::flush;
    return static_cast<bool>(procs);
}

bool CgroupTree::make_one(const fs::path& dir) {
    if (::mkdir(dir.c_str(), 0755) == 0) {
        m_made.push_back(dir);
        return true;
    }
    return errno == EEXIST;
}

} // namespace gua::test

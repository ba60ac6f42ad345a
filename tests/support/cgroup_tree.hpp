// SPDX-License-Identifier: Apache-2.0
// Real cgroups for tests that move processes into them (identity from the cgroup path).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::test {

/// Where a cgroup hierarchy is mounted: the v1 one with `v1_option` in its super options (e.g.
/// "name=systemd"), or the cgroup2 mount when `v1_option` is empty. nullopt when not mounted.
std::optional<std::filesystem::path> find_cgroup_mount(const std::string& v1_option);

/// Cgroups made for one test under `<mount>/<prefix>-<test pid>`, removed deepest first on
/// destruction — which must come after the processes moved into them were reaped. Moving a
/// (possibly reused) pid back out is never attempted.
class CgroupTree {
  public:
    CgroupTree(const std::filesystem::path& mount, const std::string& prefix);
    ~CgroupTree();
    CgroupTree(const CgroupTree&) = delete;
    CgroupTree& operator=(const CgroupTree&) = delete;

    /// Creates `relative` (and its parents) under the per-test directory; false when the
    /// hierarchy is not writable.
    bool make(const std::string& relative);
    /// Moves `pid` into the cgroup made last; false when the kernel refuses.
    bool move(pid_t pid);
    /// make(relative), then move(pid).
    bool place(const std::string& relative, pid_t pid) { return make(relative) && move(pid); }

  private:
    bool make_one(const std::filesystem::path& dir);

    std::filesystem::path m_base;
    std::filesystem::path m_leaf;
    std::vector<std::filesystem::path> m_made; ///< in creation order: parents before children
};

} // namespace gua::test

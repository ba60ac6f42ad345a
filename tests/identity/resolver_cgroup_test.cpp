// identity::Resolver with real processes moved into real cgroups (v1 name=systemd and cgroup2).
#include "identity/cgroup.hpp"
#include "identity/child_process.hpp"
#include "identity/resolver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace gua::identity {
namespace {

using testing::ChildProcess;
namespace fs = std::filesystem;

const std::string k_cid = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";

/// Where a cgroup hierarchy is mounted: the v1 one with `v1_option` in its super options, or the
/// cgroup2 mount when `v1_option` is empty. nullopt when not mounted.
std::optional<fs::path> find_mount(const std::string& v1_option) {
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

/// A cgroup subtree made for one test; removes itself (deepest first) on destruction.
class CgroupTree {
  public:
    explicit CgroupTree(fs::path mount) : m_mount(std::move(mount)) {}
    // Runs after the child is reaped, so the cgroups are empty; moving its (possibly reused) pid
    // back out here could move a stranger, so it is not done.
    ~CgroupTree() {
        for (auto it = m_made.rbegin(); it != m_made.rend(); ++it) {
            // Freeing a cgroup can lag its last process's exit by a moment.
            for (int attempt = 0; attempt < 100 && ::rmdir(it->c_str()) != 0 && errno == EBUSY;
                 ++attempt) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
    }
    CgroupTree(const CgroupTree&) = delete;
    CgroupTree& operator=(const CgroupTree&) = delete;

    /// Creates `relative` (and its parents) under a per-test directory; false when not writable.
    bool make(const std::string& relative) {
        fs::path dir = m_mount / ("gua-identity-test-" + std::to_string(getpid()));
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
    /// Moves `pid` into the leaf made last; false when the kernel refuses.
    bool move(pid_t pid) {
        std::ofstream procs(m_leaf / "cgroup.procs");
        procs << pid << std::flush;
        if (!procs) {
            return false;
        }
        return true;
    }

  private:
    bool make_one(const fs::path& dir) {
        if (::mkdir(dir.c_str(), 0755) == 0) {
            m_made.push_back(dir);
            return true;
        }
        return errno == EEXIST;
    }
    fs::path m_mount;
    fs::path m_leaf;
    std::vector<fs::path> m_made;
};

struct LiveCase {
    const char* name;
    const char* v1_option; // "" for cgroup2
    std::string path;
    CgroupFacts want;
};

class IdentityCgroupLive : public ::testing::TestWithParam<LiveCase> {};

TEST_P(IdentityCgroupLive, ResolvesAProcessMovedIntoTheCgroup) {
    const LiveCase& c = GetParam();
    const std::optional<fs::path> mount = find_mount(c.v1_option);
    if (!mount) {
        GTEST_SKIP() << "hierarchy not mounted";
    }
    CgroupTree tree(*mount); // declared first: destroyed after the child is reaped
    if (!tree.make(c.path)) {
        GTEST_SKIP() << *mount << " is not writable here";
    }
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    ASSERT_TRUE(tree.move(child.pid())) << "cannot move into " << c.path;

    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(child.pid()));
    EXPECT_EQ(facts.identity.command, "sleep");
    EXPECT_EQ(facts.identity.container_id, c.want.container_id);
    EXPECT_EQ(facts.identity.pod_uid, c.want.pod_uid);
    EXPECT_EQ(facts.identity.slurm_job, c.want.slurm_job);
    EXPECT_EQ(facts.identity.systemd_unit, c.want.systemd_unit);
}

std::string underscored(std::string uid) {
    std::replace(uid.begin(), uid.end(), '-', '_');
    return uid;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, IdentityCgroupLive,
    ::testing::Values(
        LiveCase{"V1KubepodsCgroupfs",
                 "name=systemd",
                 "kubepods/burstable/pod" + k_pod + "/" + k_cid,
                 {k_cid, k_pod, "", ""}},
        LiveCase{"V1Slurm", "name=systemd", "slurm/uid_1000/job_42/step_0", {"", "", "42", ""}},
        LiveCase{"V2KubepodsSystemd",
                 "",
                 "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                     underscored(k_pod) + ".slice/cri-containerd-" + k_cid + ".scope",
                 {k_cid, k_pod, "", ""}},
        LiveCase{"V2Slurm",
                 "",
                 "system.slice/slurmstepd.scope/job_43/step_0/user/task_0",
                 {"", "", "43", "slurmstepd.scope"}},
        LiveCase{"V2SystemdService",
                 "",
                 "system.slice/gua-demo.service",
                 {"", "", "", "gua-demo.service"}}),
    [](const ::testing::TestParamInfo<LiveCase>& param_info) {
        return std::string(param_info.param.name);
    });

} // namespace
} // namespace gua::identity

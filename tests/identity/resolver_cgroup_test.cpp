// SPDX-License-Identifier: Apache-2.0
// identity::Resolver with real processes moved into real cgroups (v1 name=systemd and cgroup2).
#include "identity/cgroup.hpp"
#include "identity/child_process.hpp"
#include "identity/resolver.hpp"
#include "support/cgroup_tree.hpp"

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
namespace resolver_cgroup_test { // named after the file: unique in a unity batch

using testing::ChildProcess;
namespace fs = std::filesystem;

const std::string k_cid = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";

using test::CgroupTree;

struct LiveCase {
    const char* name;
    const char* v1_option; // "" for cgroup2
    std::string path;
    CgroupFacts want;
};

class IdentityCgroupLive : public ::testing::TestWithParam<LiveCase> {};

TEST_P(IdentityCgroupLive, ResolvesAProcessMovedIntoTheCgroup) {
    const LiveCase& c = GetParam();
    const std::optional<fs::path> mount = test::find_cgroup_mount(c.v1_option);
    if (!mount) {
        GTEST_SKIP() << "hierarchy not mounted";
    }
    CgroupTree tree(*mount,
                    "gua-identity-test"); // declared first: destroyed after the child is reaped
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

} // namespace resolver_cgroup_test
} // namespace gua::identity

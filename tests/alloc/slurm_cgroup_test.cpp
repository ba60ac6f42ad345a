// SPDX-License-Identifier: Apache-2.0
// Slurm cgroup fixtures: job_<id> on cgroup v1 and v2, Slurm 26.05 SLUIDs, multiple-slurmd, and
// the job id a SLUID resolves to; identity's cgroup parser names the same job.
#include "alloc/slurm_cgroup.hpp"
#include "identity/cgroup.hpp"

#include <gtest/gtest.h>

namespace gua::alloc {
namespace slurm_cgroup_test {

SlurmCgroup slurm(std::string job, std::string sluid, std::string node, std::string step) {
    return SlurmCgroup{std::move(job), std::move(sluid), std::move(node), std::move(step)};
}

// /proc/<pid>/cgroup of a task of job 4242 step 0 under cgroup v1 (Slurm's own hierarchy in each
// controller; name=systemd only sees slurmd's service).
const std::string k_v1 = "12:pids:/slurm/uid_1000/job_4242/step_0/task_0\n"
                         "11:memory:/slurm/uid_1000/job_4242/step_0/task_0\n"
                         "4:devices:/slurm/uid_1000/job_4242/step_0\n"
                         "1:name=systemd:/system.slice/slurmd.service\n";
// The same on cgroup v2 (Debian 12's default).
const std::string k_v2 = "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n";
// Slurm 26.05: the job directory is the job's SLUID.
const std::string k_sluid = "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0\n";
// Debian's Slurm is built with multiple-slurmd: the scope carries the node name.
const std::string k_multi_v2 = "0::/system.slice/gpu07_slurmstepd.scope/job_77/step_batch/user/"
                               "task_0\n";
const std::string k_multi_v1 = "7:cpuset:/slurm_gpu07/uid_0/job_77/step_extern/task_0\n"
                               "1:name=systemd:/user.slice\n";

TEST(SlurmCgroup, Layouts) {
    EXPECT_EQ(parse_slurm_cgroup(k_v1), slurm("4242", "", "", "0"));
    EXPECT_EQ(parse_slurm_cgroup(k_v2), slurm("4242", "", "", "0"));
    EXPECT_EQ(parse_slurm_cgroup(k_sluid), slurm("", "s5K1KKYAYG5D00", "", "0"));
    EXPECT_EQ(parse_slurm_cgroup(k_multi_v2), slurm("77", "", "gpu07", "batch"));
    EXPECT_EQ(parse_slurm_cgroup(k_multi_v1), slurm("77", "", "gpu07", "extern"));
    // The job level itself (slurmstepd's own processes sit in the job's "slurm" leaf).
    EXPECT_EQ(parse_slurm_cgroup_path("/system.slice/slurmstepd.scope/job_9/slurm"),
              slurm("9", "", "", ""));
}

TEST(SlurmCgroup, NotSlurm) {
    for (const char* path :
         {"/", "/user.slice/user-1000.slice/session-3.scope", "/system.slice/slurmd.service",
          "/system.slice/slurmstepd.scope/system", "/slurm/uid_1000",
          "/system.slice/slurmstepd.scope/job_x1", "/system.slice/slurmstepd.scope/sabc",
          "/system.slice/slurmstepd.scope/s5k1kkyayg5d00", "/kubepods/job_12",
          "/system.slice/_slurmstepd.scope/job_3"}) {
        EXPECT_EQ(parse_slurm_cgroup_path(path), std::nullopt) << path;
    }
    EXPECT_EQ(parse_slurm_cgroup("garbage\n0::\n"), std::nullopt);
}

TEST(SlurmCgroup, SluidResolvesThroughTheEnvironmentOrTheMappingDirectory) {
    const SlurmCgroup cgroup = *parse_slurm_cgroup(k_sluid);
    using namespace std::string_literals;
    const std::string environ = "HOME=/home/a\0SLURM_JOB_ID=991\0SLURM_STEP_ID=0\0"s;
    EXPECT_EQ(slurm_job_id_from_environ(environ), "991");
    EXPECT_EQ(slurm_job_id_from_environ("SLURM_JOB_ID=9x1\0"s), "");
    EXPECT_EQ(resolve_slurm_job(cgroup, environ, {}), "991");
    const std::vector<Allocation> one = {{AllocationKind::slurm_job, "992", "a", "p"}};
    EXPECT_EQ(resolve_slurm_job(cgroup, "", one), "992");
    const std::vector<Allocation> two = {{AllocationKind::slurm_job, "992", "a", "p"},
                                         {AllocationKind::slurm_job, "993", "b", "p"}};
    EXPECT_EQ(resolve_slurm_job(cgroup, "", two), "s5K1KKYAYG5D00"); // ambiguous: show the SLUID
    EXPECT_EQ(resolve_slurm_job(*parse_slurm_cgroup(k_v2), environ, two), "4242");
}

TEST(SlurmCgroup, IdentityNamesTheSameJob) {
    EXPECT_EQ(identity::parse_cgroup(k_v1).slurm_job, "4242");
    EXPECT_EQ(identity::parse_cgroup(k_v2).slurm_job, "4242");
    EXPECT_EQ(identity::parse_cgroup(k_sluid).slurm_job, "s5K1KKYAYG5D00");
    EXPECT_EQ(identity::parse_cgroup(k_multi_v2).slurm_job, "77");
    EXPECT_EQ(identity::parse_cgroup(k_multi_v1).slurm_job, "77");
}

} // namespace slurm_cgroup_test
} // namespace gua::alloc

// SPDX-License-Identifier: Apache-2.0
// `gua doctor`'s Slurm cgroup layout: fixture trees of cgroup v2 (job_<id>, SLUID,
// multiple-slurmd) and v1 under a temporary root, each read back as its layout, and whether
// jobs can be named by id.
#include "alloc/slurm_layout.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gua::alloc {
namespace slurm_layout_test { // named after the file: unique in a unity batch

namespace fs = std::filesystem;

/// A root with cgroup v2 (cgroup.controllers) and the given directories under sys/fs/cgroup.
void v2(const std::string& root, const std::vector<std::string>& dirs) {
    fs::create_directories(root + "/sys/fs/cgroup");
    std::ofstream(root + "/sys/fs/cgroup/cgroup.controllers") << "cpu memory\n";
    for (const std::string& d : dirs) {
        fs::create_directories(root + "/sys/fs/cgroup/" + d);
    }
}

TEST(SlurmLayout, CgroupV2JobIdsAreNamed) {
    test::TempDir t;
    v2(t.file("r"),
       {"system.slice/slurmstepd.scope/job_42/step_0", "system.slice/slurmstepd.scope/job_43",
        "system.slice/slurmstepd.scope/system", "system.slice/cron.service"});
    const SlurmLayout l = detect_slurm_layout(t.file("r"));
    EXPECT_EQ(l.cgroup_version, 2);
    EXPECT_TRUE(l.slurm);
    EXPECT_EQ(l.layouts, std::vector<std::string>{"job_<id>"});
    EXPECT_EQ(l.jobs, 2U);
    EXPECT_FALSE(slurm_layout_warns(l, false));
    EXPECT_EQ(describe_slurm_layout(l, false),
              "cgroup v2, layout job_<id>, 2 jobs: every job is named by its id");
}

TEST(SlurmLayout, SluidDirectoriesWarnWithoutAMappingDirectory) {
    test::TempDir t;
    v2(t.file("r"), {"system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0"});
    const SlurmLayout l = detect_slurm_layout(t.file("r"));
    EXPECT_EQ(l.layouts, std::vector<std::string>{"SLUID"});
    EXPECT_EQ(l.sluid_jobs, 1U);
    EXPECT_TRUE(slurm_layout_warns(l, false));
    EXPECT_FALSE(slurm_layout_warns(l, true));
    EXPECT_NE(describe_slurm_layout(l, false).find("1 of 1 jobs are named by SLUID only"),
              std::string::npos);
    EXPECT_NE(describe_slurm_layout(l, true).find("ids come from SLURM_JOB_ID or the mapping"),
              std::string::npos);
}

TEST(SlurmLayout, MultipleSlurmdAndCgroupV1) {
    test::TempDir t;
    v2(t.file("m"), {"system.slice/node1_slurmstepd.scope/job_7"});
    const SlurmLayout m = detect_slurm_layout(t.file("m"));
    EXPECT_EQ(m.layouts, (std::vector<std::string>{"multiple-slurmd", "job_<id>"}));
    EXPECT_EQ(m.jobs, 1U);

    const std::string v1 = t.file("v1") + "/sys/fs/cgroup";
    fs::create_directories(v1 + "/memory");
    fs::create_directories(v1 + "/freezer/slurm/uid_1000/job_42/step_batch");
    fs::create_directories(v1 + "/freezer/slurm_node2/uid_0/job_9");
    const SlurmLayout l = detect_slurm_layout(t.file("v1"));
    EXPECT_EQ(l.cgroup_version, 1);
    EXPECT_EQ(l.jobs, 2U);
    EXPECT_EQ(l.layouts, (std::vector<std::string>{"job_<id>", "multiple-slurmd"}));
    EXPECT_EQ(describe_slurm_layout(l, false),
              "cgroup v1, layout job_<id> + multiple-slurmd, 2 jobs: every job is named by its id");
}

TEST(SlurmLayout, NoSlurmIsSaidSo) {
    test::TempDir t;
    v2(t.file("r"), {"system.slice/cron.service"});
    const SlurmLayout l = detect_slurm_layout(t.file("r"));
    EXPECT_FALSE(l.slurm);
    EXPECT_NE(describe_slurm_layout(l, false).find("no Slurm job cgroups"), std::string::npos);
    const SlurmLayout none = detect_slurm_layout(t.file("empty"));
    EXPECT_EQ(none.cgroup_version, 0);
    v2(t.file("idle"), {"system.slice/slurmstepd.scope/system"});
    EXPECT_NE(
        describe_slurm_layout(detect_slurm_layout(t.file("idle")), false).find("no job running"),
        std::string::npos);
}

} // namespace slurm_layout_test
} // namespace gua::alloc

// SPDX-License-Identifier: Apache-2.0
// The cgroup parser over real-world layouts: Docker, containerd, CRI-O, Kubernetes, Slurm, systemd.
#include "identity/cgroup.hpp"

#include <gtest/gtest.h>

namespace gua::identity {
namespace cgroup_test { // named after the file: unique in a unity batch

const std::string k_cid = "3f1c2e9a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e";
const std::string k_pod = "5ba4d5ae-1b2c-4d3e-9f80-123456789abc";
const std::string k_pod_ = "5ba4d5ae_1b2c_4d3e_9f80_123456789abc";

CgroupFacts facts(std::string container, std::string pod, std::string job, std::string unit) {
    return CgroupFacts{std::move(container), std::move(pod), std::move(job), std::move(unit)};
}

TEST(Cgroup, ContainerRuntimes) {
    EXPECT_EQ(parse_cgroup_path("/docker/" + k_cid), facts(k_cid, "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/system.slice/docker-" + k_cid + ".scope"),
              facts(k_cid, "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/system.slice/containerd.service/default/" + k_cid),
              facts(k_cid, "", "", "containerd.service"));
    EXPECT_EQ(parse_cgroup_path("/machine.slice/libpod-" + k_cid + ".scope/container"),
              facts(k_cid, "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/docker/" + k_cid + "/system.slice/jupyter.service"),
              facts(k_cid, "", "", "jupyter.service"));
}

TEST(Cgroup, KubernetesCgroupfsDriver) {
    EXPECT_EQ(parse_cgroup_path("/kubepods/burstable/pod" + k_pod + "/" + k_cid),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/kubepods/besteffort/pod" + k_pod + "/" + k_cid),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/kubepods/pod" + k_pod + "/" + k_cid),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/kubepods/burstable/pod" + k_pod), facts("", k_pod, "", ""));
}

TEST(Cgroup, KubernetesSystemdDriver) {
    const std::string slice =
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + k_pod_ + ".slice/";
    EXPECT_EQ(parse_cgroup_path(slice + "cri-containerd-" + k_cid + ".scope"),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path(slice + "crio-" + k_cid + ".scope"), facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path(slice + "docker-" + k_cid + ".scope"), facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/kubepods.slice/kubepods-pod" + k_pod_ + ".slice/crio-" + k_cid +
                                ".scope"),
              facts(k_cid, k_pod, "", ""));
    // CRI-O's monitor runs next to the container, in its own scope: same pod, no container.
    EXPECT_EQ(parse_cgroup_path(slice + "crio-conmon-" + k_cid + ".scope"),
              facts("", k_pod, "", "crio-conmon-" + k_cid + ".scope"));
    // A kind node: Kubernetes inside a Docker container; the innermost container wins.
    const std::string inner = "4a" + k_cid.substr(2);
    EXPECT_EQ(
        parse_cgroup_path("/docker/" + k_cid +
                          "/kubelet.slice/kubelet-kubepods.slice/"
                          "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
                          k_pod_ + ".slice/cri-containerd-" + inner + ".scope"),
        facts(inner, k_pod, "", ""));
}

// Read from inside a container with its own cgroup namespace (gua as a DaemonSet on cgroup v2),
// other pods' paths are relative to gua's own cgroup: the kubepods ancestors may not show.
TEST(Cgroup, KubernetesSeenFromAnotherCgroupNamespace) {
    EXPECT_EQ(parse_cgroup_path("/../../pod" + k_pod + "/" + k_cid), facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/../../kubepods-burstable-pod" + k_pod_ +
                                ".slice/cri-containerd-" + k_cid + ".scope"),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/../../../kubepods-besteffort.slice/kubepods-besteffort-pod" +
                                k_pod_ + ".slice/crio-" + k_cid + ".scope"),
              facts(k_cid, k_pod, "", ""));
    EXPECT_EQ(parse_cgroup_path("/../kubepods-pod" + std::string(32, 'e') + ".slice"),
              facts("", std::string(32, 'e'), "", ""))
        << "a static pod";
    // Only a whole uid counts where no kubepods component shows.
    EXPECT_EQ(parse_cgroup_path("/../../podcast-1.scope"), facts("", "", "", "podcast-1.scope"));
    EXPECT_EQ(parse_cgroup_path("/../../pod12ab/" + k_cid), facts(k_cid, "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/system.slice/pod" + k_pod + ".service"),
              facts("", "", "", "pod" + k_pod + ".service"))
        << "an absolute path outside kubepods names no pod";
}

TEST(Cgroup, Slurm) {
    EXPECT_EQ(parse_cgroup_path("/slurm/uid_1000/job_42/step_0/task_1"), facts("", "", "42", ""));
    EXPECT_EQ(parse_cgroup_path("/slurm/uid_1000/job_42/step_batch"), facts("", "", "42", ""));
    EXPECT_EQ(parse_cgroup_path("/slurm_node07/uid_1000/job_9001/step_extern"),
              facts("", "", "9001", ""));
    EXPECT_EQ(parse_cgroup_path("/system.slice/slurmstepd.scope/job_1234567/step_0/user/task_0"),
              facts("", "", "1234567", "slurmstepd.scope"));
    EXPECT_EQ(parse_cgroup_path("/system.slice/node1_slurmstepd.scope/job_7/step_interactive/user"),
              facts("", "", "7", "node1_slurmstepd.scope"));
    // job_ outside a Slurm tree, or not numeric, is not a job.
    EXPECT_EQ(parse_cgroup_path("/user.slice/job_42"), facts("", "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/slurm/uid_1000/job_x/step_0"), facts("", "", "", ""));
    EXPECT_EQ(parse_cgroup_path("/slurm/uid_1000/job_/step_0"), facts("", "", "", ""));
}

TEST(Cgroup, SystemdUnits) {
    EXPECT_EQ(parse_cgroup_path("/system.slice/jupyterhub.service"),
              facts("", "", "", "jupyterhub.service"));
    EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                "jupyter-lab.service"),
              facts("", "", "", "jupyter-lab.service"));
    EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/session-3.scope"),
              facts("", "", "", "session-3.scope"));
    EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                "app-gnome-code-4242.scope"),
              facts("", "", "", "app-gnome-code-4242.scope"));
    EXPECT_EQ(parse_cgroup_path("/init.scope"), facts("", "", "", "init.scope"));
    EXPECT_EQ(parse_cgroup_path("/user.slice"), facts("", "", "", ""));
}

TEST(Cgroup, NoFalsePositives) {
    for (const std::string& path : std::vector<std::string>{
             "/", "", "/process_api/4ec2faec39439a05a4408bb0a40bfdcd",
             "/user.slice/user-1000.slice/user@1000.service/app.slice/app-podcast-9.scope",
             "/docker/" + k_cid.substr(1), "/docker/" + k_cid + "0",
             "/docker/3F1C2E9A8B7D6C5E4F3A2B1C0D9E8F7A6B5C4D3E2F1A0B9C8D7E6F5A4B3C2D1E",
             "/system.slice/docker-" + k_cid.substr(2) + ".scope", "/pods/pod1234/x", "/../../..",
             "//"}) {
        const CgroupFacts got = parse_cgroup_path(path);
        EXPECT_EQ(got.container_id, "") << path;
        EXPECT_EQ(got.pod_uid, "") << path;
        EXPECT_EQ(got.slurm_job, "") << path;
    }
    EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                "app-podcast-9.scope")
                  .systemd_unit,
              "app-podcast-9.scope");
}

TEST(Cgroup, V2SingleLine) {
    EXPECT_EQ(parse_cgroup("0::/system.slice/docker-" + k_cid + ".scope\n"),
              facts(k_cid, "", "", ""));
    EXPECT_EQ(parse_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"),
              facts("", "", "", "session-3.scope"));
    EXPECT_EQ(parse_cgroup("0::/\n"), facts("", "", "", ""));
}

TEST(Cgroup, V1MultiLine) {
    const std::string text = "12:hugetlb:/kubepods/burstable/pod" + k_pod + "/" + k_cid +
                             "\n"
                             "11:cpu,cpuacct:/kubepods/burstable/pod" +
                             k_pod + "/" + k_cid +
                             "\n"
                             "5:memory:/kubepods/burstable/pod" +
                             k_pod + "/" + k_cid +
                             "\n"
                             "1:name=systemd:/kubepods/burstable/pod" +
                             k_pod + "/" + k_cid + "\n";
    EXPECT_EQ(parse_cgroup(text), facts(k_cid, k_pod, "", ""));
}

TEST(Cgroup, HybridSlurmUsesFreezerJobAndSystemdUnit) {
    // Slurm's v1 plugin manages freezer/cpuset/memory; systemd still sees slurmd's scope.
    const std::string text = "10:freezer:/slurm/uid_1000/job_42/step_0/task_0\n"
                             "7:cpuset:/slurm/uid_1000/job_42/step_0\n"
                             "4:memory:/slurm/uid_1000/job_42/step_0/task_0\n"
                             "1:name=systemd:/system.slice/slurmd.service\n"
                             "0::/system.slice/slurmd.service\n";
    EXPECT_EQ(parse_cgroup(text), facts("", "", "42", "slurmd.service"));
}

TEST(Cgroup, UnifiedLineComesFirst) {
    const std::string text = "3:cpu:/system.slice/old.service\n"
                             "1:name=systemd:/system.slice/middle.service\n"
                             "0::/system.slice/new.service\n";
    EXPECT_EQ(parse_cgroup(text).systemd_unit, "new.service");
    EXPECT_EQ(parse_cgroup("3:cpu:/system.slice/old.service\n"
                           "1:name=systemd:/system.slice/middle.service\n")
                  .systemd_unit,
              "middle.service");
}

CgroupFacts claimed(std::string container, std::string unit) {
    CgroupFacts f{std::move(container), "", "", std::move(unit)};
    f.user_claimed = true;
    return f;
}

TEST(Cgroup, WhatAUserCanCreateIsOnlyTheirClaim) {
    const std::string user = "/user.slice/user-1000.slice/user@1000.service";
    // A forged runtime scope, and rootless Podman's real layout: the user's claim either way.
    EXPECT_EQ(parse_cgroup_path(user + "/app.slice/docker-" + k_cid + ".scope"),
              claimed(k_cid, "docker-" + k_cid + ".scope"));
    EXPECT_EQ(parse_cgroup_path(user + "/user.slice/libpod-" + k_cid + ".scope/container"),
              claimed(k_cid, "libpod-" + k_cid + ".scope"));
    EXPECT_EQ(parse_cgroup_path("/user.slice/user-1000.slice/session-3.scope/" + k_cid),
              claimed(k_cid, "session-3.scope"));
    // No pod and no Slurm job from below user.slice, whatever the names.
    EXPECT_EQ(parse_cgroup_path(user + "/kubepods/burstable/pod" + k_pod + "/" + k_cid),
              claimed(k_cid, "user@1000.service"));
    EXPECT_EQ(parse_cgroup_path(user + "/app.slice/slurm.scope/job_42/step_0"),
              facts("", "", "", "slurm.scope"));
    // Nor from Slurm's own layouts rebuilt there (found by the identity fuzz target).
    EXPECT_EQ(parse_cgroup_path("/user.slice/slurm/uid_1000/job_42/step_0").slurm_job, "");
    EXPECT_EQ(parse_cgroup_path(user + "/system.slice/slurmstepd.scope/job_42/step_0").slurm_job,
              "");
    EXPECT_EQ(parse_cgroup_path("/user.slice/kubepods-pod" + k_pod_ + ".slice"),
              facts("", "", "", ""));
    // The runtime's own scopes are not claims; a real container keeps its id even with a user
    // session inside it, unless a claim is made below.
    EXPECT_FALSE(parse_cgroup_path("/system.slice/docker-" + k_cid + ".scope").user_claimed);
    EXPECT_EQ(parse_cgroup_path("/docker/" + k_cid + "/user.slice/user-1000.slice/session-1.scope"),
              facts(k_cid, "", "", "session-1.scope"));
    // Across lines, the flag follows the line the id came from.
    EXPECT_TRUE(
        parse_cgroup("0::" + user + "/app.slice/docker-" + k_cid + ".scope\n").user_claimed);
    EXPECT_FALSE(parse_cgroup("1:name=systemd:/docker/" + k_cid + "\n0::" + user + "/a.scope\n")
                     .user_claimed);
}

TEST(Cgroup, Garbage) {
    for (const std::string& text :
         std::vector<std::string>{"", "\n\n", "garbage", "1:cpu", "1:cpu:relative/docker/" + k_cid,
                                  "::::", std::string("0::/\0binary", 11), "x:y:z\n"}) {
        EXPECT_EQ(parse_cgroup(text), CgroupFacts{}) << text;
    }
    // A good line survives garbage around it; no trailing newline is needed.
    EXPECT_EQ(parse_cgroup("junk\n0::/docker/" + k_cid), facts(k_cid, "", "", ""));
}

} // namespace cgroup_test
} // namespace gua::identity

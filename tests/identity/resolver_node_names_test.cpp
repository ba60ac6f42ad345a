// SPDX-License-Identifier: Apache-2.0
// identity::Resolver naming pods and containers from a fabricated node: real processes moved into
// real kubepods and Docker cgroups, and a fake /proc for the retry of names found late.
#include "identity/child_process.hpp"
#include "identity/fake_proc.hpp"
#include "identity/node_tree.hpp"
#include "identity/resolver.hpp"
#include "support/cgroup_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace gua::identity {
namespace resolver_node_names_test { // named after the file: unique in a unity batch

using testing::ChildProcess;
using testing::NodeTree;

const std::string k_cid = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";

/// The cgroup of a Kubernetes container (v1 name=systemd hierarchy, else cgroup2 with the
/// systemd driver's layout) or of a Docker container, under a mounted hierarchy.
struct Placement {
    std::filesystem::path mount;
    std::string pod_path;
    std::string docker_path;
};

std::optional<Placement> placement() {
    if (const auto v1 = test::find_cgroup_mount("name=systemd")) {
        return Placement{*v1, "kubepods/burstable/pod" + k_pod + "/" + k_cid, "docker/" + k_cid};
    }
    if (const auto v2 = test::find_cgroup_mount("")) {
        std::string pod = k_pod;
        std::replace(pod.begin(), pod.end(), '-', '_');
        return Placement{*v2,
                         "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + pod +
                             ".slice/cri-containerd-" + k_cid + ".scope",
                         "system.slice/docker-" + k_cid + ".scope"};
    }
    return std::nullopt;
}

TEST(ResolverNodeNames, ARealProcessInAPodCgroupGetsItsNames) {
    const std::optional<Placement> where = placement();
    if (!where) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    NodeTree node;
    node.add_pod_container("ml-team", "train-7d9f", k_pod, "trainer");
    node.add_pod_container("ml-team", "train-7d9f", k_pod, "logger");
    node.add_link("ml-team", "train-7d9f", k_pod, "trainer", k_cid);
    test::CgroupTree tree(where->mount, "gua-node-names-test"); // outlives the child
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    if (!tree.place(where->pod_path, child.pid())) {
        GTEST_SKIP() << where->mount << " is not writable here";
    }
    Resolver resolver("/proc", k_first_person_uid, 1'000'000, node.paths());
    const telemetry::Identity& id =
        resolver.resolve(static_cast<std::uint32_t>(child.pid())).identity;
    EXPECT_EQ(id.pod_uid, k_pod);
    EXPECT_EQ(id.container_id, k_cid);
    EXPECT_EQ(id.pod_namespace, "ml-team");
    EXPECT_EQ(id.pod_name, "train-7d9f");
    EXPECT_EQ(id.container_name, "trainer");
}

TEST(ResolverNodeNames, ARealProcessInADockerCgroupGetsTheContainerName) {
    const std::optional<Placement> where = placement();
    if (!where) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    NodeTree node;
    node.add_docker(k_cid, R"({"ID":")" + k_cid + R"(","Name":"/llm-serve","State":{}})");
    test::CgroupTree tree(where->mount, "gua-node-names-test");
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    if (!tree.place(where->docker_path, child.pid())) {
        GTEST_SKIP() << where->mount << " is not writable here";
    }
    Resolver resolver("/proc", k_first_person_uid, 1'000'000, node.paths());
    const telemetry::Identity& id =
        resolver.resolve(static_cast<std::uint32_t>(child.pid())).identity;
    EXPECT_EQ(id.container_id, k_cid);
    EXPECT_EQ(id.container_name, "llm-serve");
    EXPECT_EQ(id.pod_uid + id.pod_namespace + id.pod_name, "");
}

TEST(ResolverNodeNames, ARealProcessWithoutANodeTreeKeepsItsIds) {
    const std::optional<Placement> where = placement();
    if (!where) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    NodeTree node;
    std::filesystem::remove_all(node.root() + "/pods");
    test::CgroupTree tree(where->mount, "gua-node-names-test");
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    if (!tree.place(where->pod_path, child.pid())) {
        GTEST_SKIP() << where->mount << " is not writable here";
    }
    Resolver resolver("/proc", k_first_person_uid, 1'000'000, node.paths());
    const telemetry::Identity& id =
        resolver.resolve(static_cast<std::uint32_t>(child.pid())).identity;
    EXPECT_EQ(id.pod_uid, k_pod);
    EXPECT_EQ(id.container_id, k_cid);
    EXPECT_EQ(id.pod_namespace + id.pod_name + id.container_name, "");
    EXPECT_EQ(id.command, "sleep");
}

TEST(ResolverNodeNames, NamesFoundLaterAreTakenAndKept) {
    testing::FakeProc proc;
    NodeTree node;
    testing::FakeProcess p;
    p.cgroup = "0::/kubepods.slice/kubepods-pod" +
               std::string("0c1d2e3f_4a5b_4c6d_8e7f_0123456789ab") + ".slice/cri-containerd-" +
               k_cid + ".scope\n";
    proc.write(77, p);
    Resolver resolver(proc.root(), k_first_person_uid, 1'000'000, node.paths(), 0);
    const ProcessFacts first = resolver.resolve(77);
    EXPECT_EQ(first.identity.pod_uid, k_pod);
    EXPECT_EQ(first.identity.pod_name, "") << "the kubelet has not written the pod's directory";
    resolver.sweep();
    EXPECT_EQ(resolver.resolve(77).serial, first.serial) << "nothing new: the same facts";

    node.add_pod_container("ml", "train-0", k_pod, "trainer");
    std::filesystem::last_write_time(node.paths().pod_logs,
                                     std::filesystem::last_write_time(node.paths().pod_logs) +
                                         std::chrono::seconds(1));
    resolver.sweep();
    const ProcessFacts second = resolver.resolve(77);
    EXPECT_EQ(second.identity.pod_namespace, "ml");
    EXPECT_EQ(second.identity.pod_name, "train-0");
    EXPECT_EQ(second.identity.container_name, "trainer");
    EXPECT_NE(second.serial, first.serial) << "new facts for the sampler to copy";

    std::filesystem::remove_all(node.paths().pod_logs); // the pod's logs are gone: names stay
    resolver.sweep();
    const ProcessFacts third = resolver.resolve(77);
    EXPECT_EQ(third.identity.pod_name, "train-0");
    EXPECT_EQ(third.serial, second.serial);
}

} // namespace resolver_node_names_test
} // namespace gua::identity

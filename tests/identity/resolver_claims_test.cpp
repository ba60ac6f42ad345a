// SPDX-License-Identifier: Apache-2.0
// identity::Resolver and cgroups a user can create: a real process moved into a scope named like
// a Docker container's under user@<uid>.service, and into a forged kubepods tree under user.slice,
// is no container's and no pod's — it keeps its user, with the scope as its unit — and borrows
// no name from the node.
#include "identity/child_process.hpp"
#include "identity/node_tree.hpp"
#include "identity/resolver.hpp"
#include "support/cgroup_tree.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::identity {
namespace resolver_claims_test { // named after the file: unique in a unity batch

using testing::ChildProcess;
using testing::NodeTree;

const std::string k_cid = "4e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
const std::string k_user = "user.slice/user-1000.slice/user@1000.service";

std::optional<std::filesystem::path> mount() {
    if (auto v1 = test::find_cgroup_mount("name=systemd")) {
        return v1;
    }
    return test::find_cgroup_mount("");
}

/// Resolves a sleep moved into `relative` (under a test cgroup) on a node that names container
/// k_cid "llm-serve" and pod k_pod; nullopt when cgroups are not writable here.
std::optional<telemetry::Identity> resolve_in(const std::string& relative) {
    const std::optional<std::filesystem::path> where = mount();
    if (!where) {
        return std::nullopt;
    }
    NodeTree node;
    node.add_docker(k_cid, R"({"Name":"/llm-serve"})");
    node.add_pod_container("ml", "train-0", k_pod, "trainer");
    test::CgroupTree tree(*where, "gua-claims-test"); // outlives the child
    ChildProcess child({"/usr/bin/sleep", "30"});
    if (!child.wait_for_comm("sleep") || !tree.place(relative, child.pid())) {
        return std::nullopt;
    }
    Resolver resolver("/proc", k_first_person_uid, 1'000'000, node.paths());
    return resolver.resolve(static_cast<std::uint32_t>(child.pid())).identity;
}

TEST(ResolverClaims, AForgedDockerScopeIsNoContainer) {
    const auto id = resolve_in(k_user + "/app.slice/docker-" + k_cid + ".scope");
    if (!id) {
        GTEST_SKIP() << "no writable cgroup hierarchy here";
    }
    EXPECT_EQ(id->container_id, "") << "a scope any user can create claims nothing";
    EXPECT_EQ(id->container_name, "") << "no name borrowed from the Docker container";
    EXPECT_EQ(id->systemd_unit, "docker-" + k_cid + ".scope");
    EXPECT_EQ(id->user, "root") << "still its user's";
}

TEST(ResolverClaims, AForgedPodTreeIsNoPod) {
    const auto id = resolve_in(k_user + "/kubepods/burstable/pod" + k_pod + "/" + k_cid);
    if (!id) {
        GTEST_SKIP() << "no writable cgroup hierarchy here";
    }
    EXPECT_EQ(id->pod_uid + id->pod_namespace + id->pod_name + id->container_id, "");
}

} // namespace resolver_claims_test
} // namespace gua::identity

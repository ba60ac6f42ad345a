// SPDX-License-Identifier: Apache-2.0
// Policy end to end: a user's process in a scope it could create itself, named like an exempt
// Docker container's (docker-<id>.scope under user@<uid>.service), is not exempt — the rule acts
// on it — while a process in the real container's scope under system.slice is.
#include "e2e/policy_harness.hpp"
#include "support/cgroup_tree.hpp"

#include <gtest/gtest.h>

namespace gua::policy_e2e {
namespace policy_forged_scope_test { // named after the file: unique in a unity batch

using namespace std::chrono_literals;

const std::string k_cid = "5a8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";

TEST(PolicyForgedScope, AForgedContainerScopeIsNotExempt) {
    GUA_REQUIRE_ROOT();
    std::optional<std::filesystem::path> where = test::find_cgroup_mount("name=systemd");
    if (!where) {
        where = test::find_cgroup_mount("");
    }
    if (!where) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    test::CgroupTree tree(*where, "gua-forged-scope"); // outlives the children
    Scene s;
    auto forger = start_as(1500, "/bin/sleep", {"60"});
    auto real = start_as(1501, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(forger->pid(), "sleep"));
    ASSERT_TRUE(wait_for_comm(real->pid(), "sleep"));
    if (!tree.place("user.slice/user-1500.slice/user@1500.service/app.slice/docker-" + k_cid +
                        ".scope",
                    forger->pid()) ||
        !tree.place("system.slice/docker-" + k_cid + ".scope", real->pid())) {
        GTEST_SKIP() << "cgroups are not writable here";
    }
    s.hold(forger->pid(), 8192);
    s.hold(real->pid(), 4096, 1);
    s.write("[policy]\nenabled = true\nexempt_containers = [\"" + k_cid.substr(0, 12) +
            "\"]\n[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\naction = \"terminate\"\n"
            "dry_run = false\ngrace = \"2s\"\n");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'released'") ==
                       1 &&
                   s.scalar("SELECT count(*) FROM policy_decision WHERE verdict = 'exempt'") == 1;
        },
        30s))
        << s.log();
    Scene::stop_daemon(*daemon);
    const std::optional<int> status = forger->wait_exit(5s);
    ASSERT_TRUE(status) << "the forger was not terminated";
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM);
    EXPECT_TRUE(real->running()) << "the real container's process is exempt";
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE verdict = 'exempt' AND pid = " +
                       std::to_string(real->pid())),
              1);
}

} // namespace policy_forged_scope_test
} // namespace gua::policy_e2e

// SPDX-License-Identifier: Apache-2.0
// Policy end to end: a process whose uid changes after gua first saw it is not signalled under the
// new uid — one that kept root as its saved uid and takes it back before the rule fires gets no
// SIGTERM; one that changes uid on receiving SIGTERM gets no SIGKILL.
#include "e2e/policy_harness.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gua::policy_e2e {
namespace policy_uid_change_test { // named after the file: unique in a unity batch

using namespace std::chrono_literals;

/// A Python program started as root that runs as uid 1500 with saved uid 0, and takes root back
/// (setresuid 0) once `trigger` exists.
std::string regains_root(const std::string& trigger) {
    return "import os, time\n"
           "os.setresuid(1500, 1500, 0)\n"
           "while not os.path.exists('" +
           trigger +
           "'): time.sleep(0.05)\n"
           "os.setresuid(0, 0, 0)\n"
           "time.sleep(60)\n";
}

/// A Python program running as root that, on SIGTERM, becomes uid 1500 instead of exiting.
const std::string k_changes_on_sigterm =
    "import os, signal, time\n"
    "signal.signal(signal.SIGTERM, lambda *a: os.setresuid(1500, 1500, 1500))\n"
    "time.sleep(60)\n";

/// The uids of `pid` as /proc says ("real effective saved fs").
std::string uids(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("Uid:")) {
            return line.substr(5);
        }
    }
    return {};
}

const std::string k_rule = "[policy]\nenabled = true\n"
                           "[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\n"
                           "action = \"terminate\"\ndry_run = false\ngrace = \"2s\"\n";

TEST(PolicyUidChange, ARegainedRootIsNotSentSigterm) {
    GUA_REQUIRE_ROOT();
    Scene s;
    const std::string trigger = s.dir().file("regain");
    auto target = start_as(0, "/usr/bin/python3", {"-c", regains_root(trigger)});
    ASSERT_TRUE(eventually([&] { return uids(target->pid()).starts_with("1500\t1500\t0"); }, 10s))
        << uids(target->pid());
    s.hold(target->pid(), 8192);
    s.write(k_rule);
    auto daemon = s.start_daemon();
    // The daemon has seen it as uid 1500; then it takes root back, before the rule fires (2 s).
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM process_tick WHERE pid = " +
                            std::to_string(target->pid())) > 0;
        },
        20s))
        << s.log();
    std::ofstream(trigger) << "go";
    ASSERT_TRUE(eventually([&] { return uids(target->pid()).starts_with("0\t0\t0"); }, 5s));
    ASSERT_TRUE(
        eventually([&] { return s.scalar("SELECT count(*) FROM policy_decision") > 0; }, 20s))
        << s.log();
    std::this_thread::sleep_for(3s); // past the grace: no SIGKILL either
    Scene::stop_daemon(*daemon);

    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'uid-changed'"), 1)
        << s.log();
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome <> 'uid-changed'"), 0)
        << s.log();
    EXPECT_FALSE(target->wait_exit(100ms)) << "the root process was signalled";
}

TEST(PolicyUidChange, AProcessThatChangedUidAfterSigtermIsNotSentSigkill) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto target = start_as(0, "/usr/bin/python3", {"-c", k_changes_on_sigterm});
    ASSERT_TRUE(wait_for_comm(target->pid(), "python3"));
    std::this_thread::sleep_for(300ms); // the handler is installed
    s.hold(target->pid(), 8192);
    // Root's processes are acted on only when a rule names root.
    s.write("[policy]\nenabled = true\n[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\n"
            "users = [\"root\"]\naction = \"terminate\"\ndry_run = false\ngrace = \"2s\"\n");
    auto daemon = s.start_daemon();
    // SIGTERM is sent to it as root; it becomes uid 1500 instead of exiting: no SIGKILL then.
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = "
                            "'uid-changed'") > 0;
        },
        30s))
        << s.log();
    EXPECT_TRUE(uids(target->pid()).starts_with("1500\t1500\t1500")) << uids(target->pid());
    Scene::stop_daemon(*daemon);

    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'uid-changed' AND "
                       "detail LIKE 'SIGKILL not sent: uid changed%'"),
              1)
        << s.log();
    EXPECT_FALSE(target->wait_exit(100ms)) << "killed under a uid the rule did not match";
}

} // namespace policy_uid_change_test
} // namespace gua::policy_e2e

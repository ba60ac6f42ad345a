// SPDX-License-Identifier: Apache-2.0
// identity::Resolver on the real /proc: real children as this user, as other uids, as a kernel.
#include "identity/child_process.hpp"
#include "identity/proc_stat.hpp"
#include "identity/resolver.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <pwd.h>
#include <unistd.h>

namespace gua::identity {
namespace {

using testing::ChildProcess;

std::string name_of(uid_t uid) {
    const passwd* entry = getpwuid(uid);
    return entry != nullptr ? entry->pw_name : "uid:" + std::to_string(uid);
}

std::optional<std::uint32_t> own_loginuid() {
    std::string text;
    std::ifstream("/proc/self/loginuid") >> text;
    return parse_loginuid(text);
}

TEST(IdentityLive, ChildAsCurrentUser) {
    ChildProcess child({"/usr/bin/sleep", "30"});
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(child.pid()));

    // The child inherits our login uid; a system account (e.g. root after sudo) yields to it.
    const std::optional<std::uint32_t> login = own_loginuid();
    const bool sudo_rule = getuid() < k_first_person_uid && login && *login >= k_first_person_uid;
    EXPECT_EQ(facts.identity.user, name_of(sudo_rule ? *login : getuid()));
    EXPECT_EQ(facts.identity.uid, getuid());
    EXPECT_EQ(facts.identity.login_uid, login);
    EXPECT_EQ(facts.identity.command, "sleep");
    EXPECT_EQ(facts.identity.jupyter_kernel, "");
    ASSERT_TRUE(facts.start_ticks.has_value());
    EXPECT_GT(*facts.start_ticks, 0u);

    // A second lookup is a cache hit with the same answer; from the next tick (sweep) after the
    // child died it is unknown.
    const ProcessFacts again = resolver.resolve(static_cast<std::uint32_t>(child.pid()));
    EXPECT_EQ(again.identity, facts.identity);
    EXPECT_EQ(again.start_ticks, facts.start_ticks);
    const auto pid = static_cast<std::uint32_t>(child.pid());
    child.stop();
    resolver.sweep();
    EXPECT_EQ(resolver.resolve(pid).identity, telemetry::unknown_identity());
    EXPECT_EQ(resolver.resolve(pid).start_ticks, std::nullopt);
}

TEST(IdentityLive, OwnProcessStartTimeMatchesStat) {
    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(getpid()));
    std::string line;
    std::getline(std::ifstream("/proc/self/stat"), line);
    const auto stat = parse_proc_stat(line);
    ASSERT_TRUE(stat.ok());
    EXPECT_EQ(facts.start_ticks, stat.value().start_ticks);
    EXPECT_EQ(facts.identity.command, stat.value().comm);
}

class IdentityLiveOtherUid : public ::testing::Test {
  protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "starting processes as other uids needs root";
        }
        if (access("/usr/bin/setpriv", X_OK) != 0) {
            GTEST_SKIP() << "no /usr/bin/setpriv";
        }
    }
    static std::vector<std::string> as_uid(std::uint32_t uid) {
        const std::string id = std::to_string(uid);
        return {"/usr/bin/setpriv", "--reuid=" + id,  "--regid=" + id,
                "--clear-groups",   "/usr/bin/sleep", "30"};
    }
};

TEST_F(IdentityLiveOtherUid, Nobody) {
    ChildProcess child(as_uid(65534));
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(child.pid()));
    ASSERT_NE(getpwuid(65534), nullptr);
    EXPECT_EQ(facts.identity.user, std::string(getpwuid(65534)->pw_name));
    EXPECT_EQ(facts.identity.uid, 65534u);
    EXPECT_EQ(facts.identity.command, "sleep");
}

TEST_F(IdentityLiveOtherUid, UidWithoutPasswdEntry) {
    ASSERT_EQ(getpwuid(54321), nullptr) << "uid 54321 unexpectedly has a passwd entry";
    ChildProcess child(as_uid(54321));
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(child.pid()));
    EXPECT_EQ(facts.identity.user, "uid:54321");
    EXPECT_EQ(facts.identity.uid, 54321u);
}

TEST(IdentityLive, JupyterKernel) {
    if (access("/usr/bin/python3", X_OK) != 0) {
        GTEST_SKIP() << "no /usr/bin/python3";
    }
    // python3 hands the arguments after -c's program to sys.argv and keeps them in argv.
    ChildProcess child({"/usr/bin/python3", "-c", "import time; time.sleep(30)", "-m",
                        "ipykernel_launcher", "-f",
                        "/tmp/x/kernel-1a2b3c4d-aaaa-bbbb-cccc-1234567890ab.json"});
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("python3"));
    Resolver resolver;
    const ProcessFacts facts = resolver.resolve(static_cast<std::uint32_t>(child.pid()));
    EXPECT_EQ(facts.identity.jupyter_kernel, "1a2b3c4d-aaaa-bbbb-cccc-1234567890ab");
    EXPECT_EQ(facts.identity.command, "python3");
}

TEST(IdentityLive, PidZeroAndHugePidAreUnknown) {
    Resolver resolver;
    EXPECT_EQ(resolver.resolve(0).identity, telemetry::unknown_identity());
    EXPECT_EQ(resolver.resolve(4'000'000'000u).identity, telemetry::unknown_identity());
    EXPECT_EQ(resolver.cached_count(), 0u);
}

} // namespace
} // namespace gua::identity

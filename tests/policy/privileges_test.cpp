// SPDX-License-Identifier: Apache-2.0
// Credentials from /proc/<pid>/status (parsed, and read from real processes started with a known
// capability set) and what each policy action needs.
#include "policy/privileges.hpp"
#include "policy/support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace gua::policy {
namespace {

using policy_test::Child;

TEST(Privileges, ParsesProcStatus) {
    const std::string text = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\n"
                             "Uid:\t1500\t1700\t1700\t1700\nGid:\t1500\t5\t5\t5\n"
                             "FDSize:\t64\nGroups:\t44 5 27 \nCapInh:\t0000000000000020\n"
                             "CapPrm:\t0000000000000020\nCapEff:\t0000000000000022\n";
    const Result<Credentials> c = parse_proc_status(text);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c.value().uid, 1700U) << "the effective uid acts";
    EXPECT_EQ(c.value().gids, (std::vector<std::uint32_t>{5, 44, 27}));
    EXPECT_EQ(c.value().effective_caps, 0x22U);
    EXPECT_TRUE(c.value().has_capability(k_cap_kill));
    EXPECT_TRUE(c.value().has_capability(k_cap_dac_override));
    EXPECT_FALSE(c.value().has_capability(0));
    EXPECT_FALSE(parse_proc_status("Name:\tx\nUid:\t1\t1\t1\t1\n").ok());
    EXPECT_FALSE(parse_proc_status("Uid:\t1\t1\nGid:\t1\t1\nCapEff:\tzz\n").ok());
}

TEST(Privileges, WhatEachActionNeeds) {
    Credentials plain;
    plain.uid = 998;
    plain.gids = {998, 44};
    EXPECT_EQ(missing_privilege(Action::log, plain, 5), std::nullopt);
    EXPECT_EQ(missing_privilege(Action::terminate, plain, 5),
              "uid 998 has no CAP_KILL, so it may signal only its own processes");
    EXPECT_EQ(missing_privilege(Action::notify, plain, 5),
              "uid 998 is not in group tty (gid 5), so it cannot write to other users' terminals");
    EXPECT_EQ(missing_privilege(Action::notify, plain, std::nullopt),
              "there is no tty group, and uid 998 has no CAP_DAC_OVERRIDE");

    Credentials service = plain;
    service.gids.push_back(5);
    service.effective_caps = std::uint64_t{1} << k_cap_kill;
    EXPECT_EQ(missing_privilege(Action::terminate, service, 5), std::nullopt);
    EXPECT_EQ(missing_privilege(Action::notify, service, 5), std::nullopt);

    Credentials root;
    root.effective_caps = ~std::uint64_t{0};
    EXPECT_EQ(missing_privilege(Action::notify, root, std::nullopt), std::nullopt);
    EXPECT_EQ(required_privilege(Action::terminate), "CAP_KILL");
    EXPECT_EQ(required_privilege(Action::log), "");
}

// A process started by setpriv as another uid with exactly CAP_KILL (as gua.service starts the
// daemon) shows that capability and that uid; one started without shows none.
TEST(Privileges, ReadsARealProcessStartedWithTheServicesCapabilities) {
    if (::geteuid() != 0 || !std::ifstream("/usr/bin/setpriv").good()) {
        GTEST_SKIP() << "needs root and setpriv to start a process with chosen capabilities";
    }
    Child with({"/usr/bin/setpriv", "--reuid=1700", "--regid=1700", "--groups=5",
                "--inh-caps=-all,+kill", "--ambient-caps=+kill", "--bounding-set=-all,+kill",
                "/bin/sleep", "30"});
    Child without({"/usr/bin/setpriv", "--reuid=1700", "--regid=1700", "--clear-groups",
                   "--inh-caps=-all", "--bounding-set=-all", "/bin/sleep", "30"});
    const auto settled = [](pid_t pid) {
        for (int i = 0; i < 500; ++i) {
            std::string comm;
            std::ifstream("/proc/" + std::to_string(pid) + "/comm") >> comm;
            if (comm == "sleep") {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    ASSERT_TRUE(settled(with.pid()) && settled(without.pid()));
    const Result<Credentials> a =
        read_credentials("/proc/" + std::to_string(with.pid()) + "/status");
    const Result<Credentials> b =
        read_credentials("/proc/" + std::to_string(without.pid()) + "/status");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.value().uid, 1700U);
    EXPECT_EQ(a.value().effective_caps, std::uint64_t{1} << k_cap_kill);
    EXPECT_TRUE(a.value().in_group(5));
    EXPECT_EQ(missing_privilege(Action::terminate, a.value(), 5), std::nullopt);
    EXPECT_EQ(missing_privilege(Action::notify, a.value(), 5), std::nullopt);
    EXPECT_EQ(b.value().effective_caps, 0U);
    EXPECT_EQ(b.value().gids, std::vector<std::uint32_t>{1700});
    EXPECT_TRUE(missing_privilege(Action::terminate, b.value(), 5).has_value());
    EXPECT_TRUE(missing_privilege(Action::notify, b.value(), 5).has_value());
}

} // namespace
} // namespace gua::policy

// SPDX-License-Identifier: Apache-2.0
// The credentials a unit gives its daemon: capability lists as systemd merges them, User=/groups
// through a --root tree's account files, and the packaged unit granting exactly what the policy
// actions need.
#include "ops/service_credentials.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gua::ops {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t k_kill = std::uint64_t{1} << policy::k_cap_kill;
constexpr std::uint64_t k_dac = std::uint64_t{1} << policy::k_cap_dac_override;

class RootTree : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "gua-creds-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_root = pattern;
        fs::create_directories(m_root / "etc");
        std::ofstream(m_root / "etc/passwd")
            << "root:x:0:0:root:/root:/bin/bash\n"
               "gua:x:998:997:gua GPU usage audit:/var/lib/gua:/usr/sbin/nologin\n";
        std::ofstream(m_root / "etc/group")
            << "root:x:0:\ntty:x:5:\nvideo:x:44:\ngua:x:997:\nmonitor:x:1200:gua,alice\n";
    }
    void TearDown() override { fs::remove_all(m_root); }
    Paths paths() const { return system_paths(m_root.string()); }
    UnitSettings unit(const std::string& service) const {
        std::ofstream(m_root / "gua.service") << "[Service]\n" << service;
        return read_unit_settings((m_root / "gua.service").string(), "/nonexistent");
    }

  private:
    fs::path m_root;
};

TEST(CapabilityMask, MergesListsAsSystemdDoes) {
    EXPECT_EQ(capability_mask({}), 0U);
    EXPECT_EQ(capability_mask({"CAP_KILL"}), k_kill);
    EXPECT_EQ(capability_mask({"CAP_NET_RAW CAP_KILL", "CAP_DAC_OVERRIDE"}), k_kill | k_dac);
    EXPECT_EQ(capability_mask({"~CAP_SYS_ADMIN"}) & (k_kill | k_dac), k_kill | k_dac);
    EXPECT_EQ(capability_mask({"~CAP_KILL CAP_SYS_ADMIN"}) & (k_kill | k_dac), k_dac);
    EXPECT_EQ(capability_mask({"CAP_KILL CAP_DAC_OVERRIDE", "~CAP_KILL"}), k_dac);
}

TEST_F(RootTree, ThePackagedUnitGrantsKillAndTheTtyGroupToUserGua) {
    const UnitSettings packaged =
        read_unit_settings(std::string(GUA_SOURCE_DIR) + "/packaging/gua.service", "/nonexistent");
    const Result<policy::Credentials> c = unit_credentials(packaged, paths());
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c.value().uid, 998U);
    EXPECT_EQ(c.value().gids, (std::vector<std::uint32_t>{997, 1200, 44, 5}));
    EXPECT_EQ(c.value().effective_caps, k_kill) << "CAP_KILL and nothing else";
    EXPECT_FALSE(policy::missing_privilege(policy::Action::terminate, c.value(), 5));
    EXPECT_FALSE(policy::missing_privilege(policy::Action::notify, c.value(), 5));
}

TEST_F(RootTree, AnEmptyBoundingSetOrNoAmbientCapabilityLeavesNone) {
    const Result<policy::Credentials> bare =
        unit_credentials(unit("User=gua\nCapabilityBoundingSet=\nAmbientCapabilities=CAP_KILL\n"
                              "SupplementaryGroups=video\n"),
                         paths());
    ASSERT_TRUE(bare.ok()) << bare.error().message;
    EXPECT_EQ(bare.value().effective_caps, 0U) << "an empty bounding set masks the ambient one";
    EXPECT_EQ(bare.value().gids, (std::vector<std::uint32_t>{997, 1200, 44}));
    EXPECT_EQ(policy::missing_privilege(policy::Action::terminate, bare.value(), 5),
              "uid 998 has no CAP_KILL, so it may signal only its own processes");
    EXPECT_TRUE(policy::missing_privilege(policy::Action::notify, bare.value(), 5));

    const Result<policy::Credentials> no_ambient = unit_credentials(unit("User=gua\n"), paths());
    ASSERT_TRUE(no_ambient.ok());
    EXPECT_EQ(no_ambient.value().effective_caps, 0U) << "a non-root user gets no capabilities";
}

TEST_F(RootTree, RootGetsItsBoundingSet) {
    const Result<policy::Credentials> all = unit_credentials(unit("Group=video\n"), paths());
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all.value().uid, 0U);
    EXPECT_EQ(all.value().gids, std::vector<std::uint32_t>{44});
    EXPECT_EQ(all.value().effective_caps, ~std::uint64_t{0});
    const Result<policy::Credentials> bounded =
        unit_credentials(unit("User=root\nCapabilityBoundingSet=CAP_SYS_NICE\n"), paths());
    ASSERT_TRUE(bounded.ok());
    EXPECT_EQ(bounded.value().effective_caps, 0U);
}

TEST_F(RootTree, UnknownAccountsAreErrors) {
    const Result<policy::Credentials> user = unit_credentials(unit("User=nobody2\n"), paths());
    ASSERT_FALSE(user.ok());
    EXPECT_EQ(user.error().message, "User=nobody2 is not in " + (paths().root + "/etc/passwd"));
    const Result<policy::Credentials> group =
        unit_credentials(unit("User=gua\nSupplementaryGroups=video ttyy\n"), paths());
    ASSERT_FALSE(group.ok());
    EXPECT_EQ(group_gid(paths(), "tty"), 5U);
    EXPECT_EQ(group_gid(paths(), "ttyy"), std::nullopt);
}

} // namespace
} // namespace gua::ops

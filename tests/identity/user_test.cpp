// SPDX-License-Identifier: Apache-2.0
// The attribution rule (real uid, login uid after sudo) and user labels.
#include "identity/user.hpp"

#include <gtest/gtest.h>

#include <pwd.h>

namespace gua::identity {
namespace {

constexpr std::optional<std::uint32_t> k_unset = std::nullopt;

TEST(IdentityUser, RealUidWins) {
    EXPECT_EQ(attributed_uid(1000u, k_unset), 1000u);
    EXPECT_EQ(attributed_uid(1000u, 1001u), 1000u); // `su other` from a login: the new person
    EXPECT_EQ(attributed_uid(0u, k_unset), 0u);     // root daemon, no login
    EXPECT_EQ(attributed_uid(33u, k_unset), 33u);   // www-data
    EXPECT_EQ(attributed_uid(65534u, 1000u), 65534u);
}

TEST(IdentityUser, SystemAccountYieldsToLoginUid) {
    EXPECT_EQ(attributed_uid(0u, 1000u), 1000u); // sudo python train.py
    EXPECT_EQ(attributed_uid(33u, 1005u), 1005u);
    EXPECT_EQ(attributed_uid(0u, 0u), 0u);   // root logged in as root
    EXPECT_EQ(attributed_uid(0u, 999u), 0u); // a system login uid is no person
    EXPECT_EQ(attributed_uid(0u, 500u, 500), 500u);
    EXPECT_EQ(attributed_uid(k_unset, 1000u), 1000u);
    EXPECT_EQ(attributed_uid(k_unset, k_unset), k_unset);
}

TEST(IdentityUser, PasswdNames) {
    EXPECT_EQ(passwd_name(0), "root");
    const passwd* nobody = getpwuid(65534);
    ASSERT_NE(nobody, nullptr);
    EXPECT_EQ(passwd_name(65534), std::string(nobody->pw_name));
    ASSERT_EQ(getpwuid(54321), nullptr);
    EXPECT_EQ(passwd_name(54321), std::nullopt);
}

TEST(IdentityUser, Labels) {
    EXPECT_EQ(user_label(1000u, "ann"), "ann");
    EXPECT_EQ(user_label(54321u, std::nullopt), "uid:54321");
    EXPECT_EQ(user_label(54321u, ""), "uid:54321");
    EXPECT_EQ(user_label(k_unset, std::nullopt), "unknown");
}

} // namespace
} // namespace gua::identity

// SPDX-License-Identifier: Apache-2.0
// Parsers of /proc/<pid>/stat, status and loginuid, on real kernel text and on hostile comms.
#include "identity/proc_stat.hpp"

#include <gtest/gtest.h>

namespace gua::identity {
namespace {

// Fields 3..21 of a real stat line, then starttime (field 22) and a few more.
constexpr const char* k_tail = " S 1 4242 4242 0 -1 4194560 812 0 0 0 3 1 0 0 20 0 1 0 %s 8212480 "
                               "230 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";

std::string stat_line(const std::string& head, const std::string& start) {
    std::string tail = k_tail;
    tail.replace(tail.find("%s"), 2, start);
    return head + tail + "\n";
}

TEST(ProcStat, ParsesPlainLine) {
    const auto stat = parse_proc_stat(stat_line("4242 (python3)", "987654321"));
    ASSERT_TRUE(stat.ok()) << stat.error().message;
    EXPECT_EQ(stat.value().comm, "python3");
    EXPECT_EQ(stat.value().start_ticks, 987654321u);
}

TEST(ProcStat, CommWithSpacesAndParentheses) {
    for (const std::string& comm :
         std::vector<std::string>{"(a) b)", "a b c", ") 1 2 3 (", "x)", "((", "", "S 1 2 3 4 5"}) {
        const auto stat = parse_proc_stat(stat_line("77 (" + comm + ")", "5550001"));
        ASSERT_TRUE(stat.ok()) << comm;
        EXPECT_EQ(stat.value().comm, comm);
        EXPECT_EQ(stat.value().start_ticks, 5550001u) << comm;
    }
}

TEST(ProcStat, LargeStartTime) {
    const auto stat = parse_proc_stat(stat_line("1 (init)", "18446744073709551614"));
    ASSERT_TRUE(stat.ok());
    EXPECT_EQ(stat.value().start_ticks, 18446744073709551614u);
}

TEST(ProcStat, RejectsGarbage) {
    for (const std::string& bad :
         std::vector<std::string>{"", "garbage", "12 (sleep S 1 2", "12 (sleep) S 1 2 3",
                                  stat_line("12 (sleep)", "-5"), stat_line("12 (sleep)", "12x"),
                                  "12 )sleep( S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9"}) {
        EXPECT_FALSE(parse_proc_stat(bad).ok()) << bad;
    }
}

TEST(ProcStat, StatusRealUid) {
    const std::string status = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t9\n"
                               "Uid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\n";
    ASSERT_TRUE(parse_status_real_uid(status).ok());
    EXPECT_EQ(parse_status_real_uid(status).value(), 1000u);
    EXPECT_EQ(parse_status_real_uid("Uid: 65534 65534 65534 65534").value(), 65534u);
    EXPECT_FALSE(parse_status_real_uid("Name:\tx\nGid:\t0\t0\t0\t0\n").ok());
    EXPECT_FALSE(parse_status_real_uid("Uid:\t\n").ok());
    EXPECT_FALSE(parse_status_real_uid("Uid:\t-1\t0\t0\t0\n").ok());
    EXPECT_FALSE(parse_status_real_uid("").ok());
    EXPECT_FALSE(parse_status_real_uid("NotUid:\t5\n").ok());
}

TEST(ProcStat, LoginUid) {
    EXPECT_EQ(parse_loginuid("1000"), 1000u);
    EXPECT_EQ(parse_loginuid("0\n"), 0u);
    EXPECT_EQ(parse_loginuid("4294967295"), std::nullopt);
    EXPECT_EQ(parse_loginuid(""), std::nullopt);
    EXPECT_EQ(parse_loginuid("abc"), std::nullopt);
    EXPECT_EQ(parse_loginuid("-1"), std::nullopt);
}

} // namespace
} // namespace gua::identity

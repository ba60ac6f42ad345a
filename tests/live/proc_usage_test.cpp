// SPDX-License-Identifier: Apache-2.0
// `gua top`'s /proc readings: the stat fields after a hostile comm, RSS and uid from status, CPU %
// over the time between two frames on a fake /proc, and the process tree from the ancestry.
#include "live/proc_usage.hpp"
#include "live/tree.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace gua::live {
namespace proc_usage_test { // named after the file: unique in a unity batch

/// A /proc/<pid>/stat line: comm, ppid, utime, stime, starttime; the rest zeros.
std::string stat_line(std::uint32_t pid, const std::string& comm, std::uint32_t ppid,
                      std::uint64_t utime, std::uint64_t stime, std::uint64_t start) {
    std::string s = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid);
    for (int field = 5; field <= 52; ++field) {
        s += " " + std::to_string(field == 14   ? utime
                                  : field == 15 ? stime
                                  : field == 22 ? start
                                                : 0);
    }
    return s + "\n";
}

void write_proc(const test::TempDir& root, std::uint32_t pid, const std::string& stat, long rss_kib,
                std::uint32_t uid) {
    const std::string dir = root.file(std::to_string(pid));
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat") << stat;
    std::ofstream(dir + "/status") << "Name:\tx\nUid:\t" << uid << "\t" << uid << "\t" << uid
                                   << "\t" << uid << "\nVmRSS:\t  " << rss_kib << " kB\n";
}

TEST(ProcUsage, StatFieldsAfterAHostileComm) {
    const auto s = parse_stat_sample(stat_line(42, "a) S 1 (b", 7, 300, 45, 123456));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->comm, "a) S 1 (b");
    EXPECT_EQ(s->ppid, 7U);
    EXPECT_EQ(s->cpu_ticks, 345U);
    EXPECT_EQ(s->start_ticks, 123456U);
    EXPECT_FALSE(parse_stat_sample("42 (x) S 1 2 3"));
    EXPECT_FALSE(parse_stat_sample("no parenthesis at all"));
}

TEST(ProcUsage, CpuPercentBetweenFramesAndRss) {
    test::TempDir root;
    const auto hz = static_cast<std::uint64_t>(sysconf(_SC_CLK_TCK));
    write_proc(root, 42, stat_line(42, "python", 1, 1000, 0, 555), 2048, 1500);
    NowModel m;
    HolderNow h;
    h.pid = 42;
    h.start_ticks = 555;
    m.holders.push_back(h);
    CpuMeter meter(root.path());
    NowModel first = m;
    meter.measure(first, 0);
    EXPECT_FALSE(first.holders[0].cpu_pct) << "no CPU % at the first sight";
    EXPECT_EQ(first.holders[0].rss_kib, 2048);
    EXPECT_EQ(first.holders[0].ppid, 1U);
    // Two seconds later it used one and a half seconds of CPU: 75 %.
    write_proc(root, 42, stat_line(42, "python", 1, 1000 + hz, hz / 2, 555), 4096, 1500);
    NowModel second = m;
    meter.measure(second, 2 * k_us_per_second);
    ASSERT_TRUE(second.holders[0].cpu_pct);
    EXPECT_NEAR(*second.holders[0].cpu_pct, 75.0, 1e-9);
    EXPECT_EQ(second.holders[0].rss_kib, 4096);
    // The pid now names another process (other start time): nothing is read for the holder.
    write_proc(root, 42, stat_line(42, "other", 1, 5, 0, 999), 8, 0);
    NowModel third = m;
    meter.measure(third, 3 * k_us_per_second);
    EXPECT_FALSE(third.holders[0].cpu_pct);
    EXPECT_FALSE(third.holders[0].rss_kib);
}

TEST(ProcTree, HoldersUnderTheirAncestors) {
    // init(1) → sshd(10) → bash(20) → python(30, two cards) and python(31); tmux(40) → 41.
    const std::map<std::uint32_t, ProcNode> procs{
        {10, {1, "root", "sshd"}},     {20, {10, "alice", "bash"}}, {30, {20, "alice", "python"}},
        {31, {20, "alice", "python"}}, {40, {1, "bob", "tmux"}},    {41, {40, "bob", "python"}}};
    std::vector<HolderNow> holders(4);
    holders[0].pid = 41;
    holders[1].pid = 30;
    holders[2].pid = 31;
    holders[3].pid = 30;
    const auto rows = tree_rows(holders, [&](std::uint32_t pid) -> std::optional<ProcNode> {
        const auto it = procs.find(pid);
        return it == procs.end() ? std::nullopt : std::optional(it->second);
    });
    std::vector<std::string> shown;
    for (const TreeRow& r : rows) {
        shown.push_back(std::to_string(r.depth) + ":" + std::to_string(r.pid) +
                        (r.holder ? "#" + std::to_string(*r.holder) : " " + r.command));
    }
    EXPECT_EQ(shown, (std::vector<std::string>{"0:10 sshd", "1:20 bash", "2:30#1", "2:30#3",
                                               "2:31#2", "0:40 tmux", "1:41#0"}));
    // A holder whose parent is gone is a root.
    const auto orphan = tree_rows(holders, [](std::uint32_t) { return std::nullopt; });
    EXPECT_EQ(orphan.size(), 4U);
    EXPECT_EQ(orphan[0].depth, 0);
}

} // namespace proc_usage_test
} // namespace gua::live

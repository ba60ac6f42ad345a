// SPDX-License-Identifier: Apache-2.0
// Holders' command lines from a proc tree: shown only while the pid still has the holder's start
// time.
#include "identity/fake_proc.hpp"
#include "live/command_line.hpp"

#include <gtest/gtest.h>

namespace gua::live {
namespace {

HolderNow holder(std::uint32_t pid, std::optional<std::uint64_t> start_ticks) {
    HolderNow h;
    h.pid = pid;
    h.start_ticks = start_ticks;
    h.command = "python3";
    return h;
}

TEST(LiveCommandLine, OnlyForTheSameProcess) {
    identity::testing::FakeProc proc;
    identity::testing::FakeProcess p;
    p.start_ticks = 1000;
    p.cmdline = std::string("/opt/conda/bin/python3") + '\0' + "train.py" + '\0' + "--lr" + '\0' +
                "3e-4" + '\0';
    proc.write(4242, p);
    NowModel m;
    m.holders = {holder(4242, 1000), holder(4242, 999), holder(4242, std::nullopt),
                 holder(4343, 1000)};
    fill_command_lines(m, proc.root());
    EXPECT_EQ(m.holders[0].command_line, "python3 train.py --lr 3e-4");
    EXPECT_EQ(m.holders[1].command_line, "") << "pid reused: another process";
    EXPECT_EQ(m.holders[2].command_line, "") << "start time unknown";
    EXPECT_EQ(m.holders[3].command_line, "") << "exited";
}

} // namespace
} // namespace gua::live

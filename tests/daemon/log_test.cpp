// SPDX-License-Identifier: Apache-2.0
// daemon::Log: a failed write (a full disk: /dev/full) loses its line and never throws.
#include "daemon/log.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gua::daemon {
namespace {

TEST(DaemonLog, WritesTimestampedLinesAndSurvivesAFullDisk) {
    test::TempDir dir;
    {
        Log log(dir.file("gua.log"));
        log.line("first");
        log.reopen();
        log.line("second");
    }
    std::ifstream in(dir.file("gua.log"));
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_TRUE(text.str().find("Z first\n") != std::string::npos) << text.str();
    EXPECT_TRUE(text.str().ends_with("Z second\n")) << text.str();

    Log full("/dev/full");
    EXPECT_NO_THROW(full.line("lost"));
    EXPECT_NO_THROW(full.line(std::string(100000, 'x')));
    EXPECT_NO_THROW(full.reopen());
}

// Found by fuzz_config: a TOML parse error quotes the bad bytes, newline included, and a SIGHUP
// reload logs it ("configuration not reloaded: …") — which must stay one line.
TEST(DaemonLog, ControlCharactersInAMessageStayOnItsLine) {
    test::TempDir dir;
    {
        Log log(dir.file("gua.log"));
        log.line("configuration not reloaded: gua.toml:4: expected 'true', saw 'tru\n'");
        log.line("held by \x1b[31mred\x1b[0m");
    }
    std::ifstream in(dir.file("gua.log"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_TRUE(lines[0].ends_with("Z configuration not reloaded: gua.toml:4: expected 'true', "
                                   "saw 'tru\\x0a'"))
        << lines[0];
    EXPECT_TRUE(lines[1].ends_with("Z held by \\x1b[31mred\\x1b[0m")) << lines[1];
}

} // namespace
} // namespace gua::daemon

// daemon::Log: a failed write (a full disk: /dev/full) loses its line and never throws.
#include "daemon/log.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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

} // namespace
} // namespace gua::daemon

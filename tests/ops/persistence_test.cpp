// SPDX-License-Identifier: Apache-2.0
// The reboot caveat of a background daemon and the persistent way for each init system.
#include "ops/persistence.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gua::ops {
namespace {

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(Persistence, InitSystemFromPidOnesName) {
    test::TempDir proc;
    std::filesystem::create_directories(proc.file("1"));
    const Paths live = system_paths("");
    for (const auto& [comm, init] :
         std::vector<std::pair<std::string, InitSystem>>{{"systemd", InitSystem::systemd},
                                                         {"runit", InitSystem::runit},
                                                         {"s6-svscan", InitSystem::s6}}) {
        std::ofstream(proc.file("1/comm")) << comm << "\n";
        EXPECT_EQ(detect_init(live, proc.path()), init) << comm;
    }
    EXPECT_EQ(detect_init(system_paths(proc.path()), proc.path()), InitSystem::unknown)
        << "a --root tree is not the running system";
}

TEST(Persistence, SystemDaemonSaysRootNoRebootAndTheCrontabLine) {
    const Paths p = system_paths("");
    const std::vector<std::string> lines =
        background_caveats(p, InitSystem::sysvinit, "/usr/bin/gua start", "/usr/bin/gua daemon");
    ASSERT_EQ(lines.size(), 4U);
    EXPECT_EQ(lines[0], "It runs as root (not as user gua with only CAP_KILL, as gua.service "
                        "does); its state directory /var/lib/gua is root's, mode 0755, so every "
                        "user can read the database.");
    EXPECT_EQ(lines[1], "It will NOT start again after a reboot.");
    EXPECT_EQ(lines[2],
              "To start it at every boot, add this line to the crontab (`sudo crontab -e`):");
    EXPECT_EQ(lines[3], "  @reboot /usr/bin/gua start");
}

TEST(Persistence, AContainerGetsTheDaemonCommandAndAUserTheirOwnCrontab) {
    const std::vector<std::string> container = background_caveats(
        system_paths(""), InitSystem::container, "gua start", "/usr/bin/gua daemon --db x");
    EXPECT_TRUE(has_line(container, "  /usr/bin/gua daemon --db x"));
    EXPECT_FALSE(has_line(container, "  @reboot gua start"));
    Paths user = system_paths("");
    user.scope = Scope::user;
    user.state_dir = "/home/alice/.local/state/gua";
    const std::vector<std::string> own =
        background_caveats(user, InitSystem::unknown, "gua start", "gua daemon");
    EXPECT_EQ(own[0], "It runs as you, with its state in /home/alice/.local/state/gua.");
    EXPECT_TRUE(has_line(own, "To start it at every boot, add this line to the crontab "
                              "(`crontab -e`):"));
    EXPECT_TRUE(has_line(own, "  @reboot gua start"));
}

} // namespace
} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// End to end: `gua uninstall` keeps the database (and says where it is) unless --purge.
#include "ops/harness.hpp"

#include <gtest/gtest.h>

namespace gua::ops::testing {
namespace {

class Uninstall : public FakeGpuTest {
  protected:
    /// Installs a unit and a config in the root tree as the package would, with a dpkg database
    /// there (read by dpkg-query --root) that says the gua package owns both; returns the unit.
    fs::path install_as_package() const {
        const fs::path unit = root() / "lib/systemd/system/gua.service";
        fs::create_directories(unit.parent_path());
        fs::create_directories(config_file().parent_path());
        fs::create_directories(root() / "var/lib/dpkg/info");
        std::ofstream(unit) << "[Service]\nExecStart=/usr/bin/gua daemon\n";
        std::ofstream(config_file()) << "[daemon]\n";
        std::ofstream(root() / "var/lib/dpkg/status")
            << "Package: gua\nStatus: install ok installed\nVersion: 0.1.0\nArchitecture: amd64\n"
               "Maintainer: gua <gua@example.org>\nDescription: test\n";
        std::ofstream(root() / "var/lib/dpkg/info/gua.list")
            << "/lib/systemd/system/gua.service\n/etc/gua/gua.toml\n";
        return unit;
    }
};

TEST_F(Uninstall, StopsTheDaemonAndKeepsTheDatabase) {
    ASSERT_EQ(start_background().exit_code, 0);
    const PidFileInfo daemon = read_pid_file(pid_file().string());
    const GuaRun removed = gua("uninstall");
    ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_TRUE(contains(removed.out, "stop the background daemon")) << removed.out;
    EXPECT_TRUE(contains(removed.out, "Kept the database " + db().string())) << removed.out;
    EXPECT_TRUE(contains(removed.out, "`gua uninstall --purge` deletes it")) << removed.out;
    EXPECT_FALSE(is_alive(daemon.id));
    EXPECT_FALSE(fs::exists(pid_file()));
    EXPECT_TRUE(fs::exists(db()));
    EXPECT_TRUE(fs::exists(config_file()));
    const GuaRun report = run_gua({"report", "--db", db().string(), "--since", "1h"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
}

TEST_F(Uninstall, PurgeDeletesDatabaseLogAndConfig) {
    ASSERT_EQ(start_background().exit_code, 0);
    const GuaRun dry = gua("uninstall", {"--purge", "--dry-run"});
    EXPECT_TRUE(contains(dry.out, "- remove " + db().string() + " (database)")) << dry.out;
    EXPECT_TRUE(fs::exists(db()));
    const GuaRun purged = gua("uninstall", {"--purge"});
    ASSERT_EQ(purged.exit_code, 0) << purged.out << purged.err;
    EXPECT_TRUE(contains(purged.out, "✓ remove " + db().string() + " (database)")) << purged.out;
    for (const fs::path& gone : {db(), log_file(), pid_file(), config_file(), state_dir(),
                                 fs::path(db().string() + ".lock")}) {
        EXPECT_FALSE(fs::exists(gone)) << gone;
    }
    EXPECT_EQ(gua("uninstall").out,
              "Nothing to uninstall: no gua.service installed, no daemon running.\n");
}

TEST_F(Uninstall, NothingInstalledIsNotAnError) {
    const GuaRun removed = gua("uninstall");
    EXPECT_EQ(removed.exit_code, 0);
    EXPECT_TRUE(contains(removed.out, "Nothing to uninstall")) << removed.out;
}

TEST_F(Uninstall, PackagedUnitThatIsNotEnabledIsNamedNotDenied) {
    const fs::path unit = install_as_package();
    const GuaRun removed = gua("uninstall");
    ASSERT_EQ(removed.exit_code, 0) << removed.err;
    EXPECT_EQ(removed.out, "Nothing to uninstall: " + unit.string() +
                               " is not enabled and no daemon is running.\n" + unit.string() +
                               " belongs to the gua package: `apt remove gua` removes it.\n");
}

TEST_F(Uninstall, FromThePackagesPrermNamesAptNotTheBinaryBeingRemoved) {
    install_as_package();
    ASSERT_EQ(start_background().exit_code, 0);
    const GuaRun removed = gua("uninstall", {"--package-removal"});
    ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_TRUE(contains(removed.out, "Kept the database " + db().string())) << removed.out;
    EXPECT_TRUE(contains(removed.out, "`apt purge gua` deletes it")) << removed.out;
    EXPECT_FALSE(contains(removed.out, "`gua ")) << removed.out;
    EXPECT_FALSE(contains(removed.out, "apt remove")) << removed.out;
    EXPECT_TRUE(fs::exists(db()));
}

TEST_F(Uninstall, PackageOwnedUnitAndConfigAreLeftToDpkg) {
    const fs::path unit = install_as_package();
    ASSERT_EQ(start_background().exit_code, 0);
    const GuaRun purged = gua("uninstall", {"--purge"});
    ASSERT_EQ(purged.exit_code, 0) << purged.out << purged.err;
    EXPECT_TRUE(fs::exists(unit)) << purged.out;
    EXPECT_TRUE(fs::exists(config_file())) << purged.out;
    EXPECT_FALSE(fs::exists(db()));
}

} // namespace
} // namespace gua::ops::testing

// SPDX-License-Identifier: Apache-2.0
// End to end: `gua start/status/stop/uninstall` in service mode under --root, with systemd
// "running" (<root>/run/systemd/system exists) and systemctl replaced by a script that logs its
// calls and keeps the unit's state in files; and with the real systemctl, offline.
#include "ops/harness.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace gua::ops::testing {
namespace {

using nlohmann::json;

class Service : public OpsTest {
  protected:
    void SetUp() override {
        OpsTest::SetUp();
        fs::create_directories(root() / "run/systemd/system");
        const fs::path script = root() / "fake-systemctl";
        std::ofstream(script) << "#!/bin/sh\n"
                                 "state='"
                              << (root() / "fake-state").string()
                              << "'\nmkdir -p \"$state\"\n"
                                 "echo \"$*\" >> '"
                              << log().string()
                              << "'\n"
                                 "for a; do case \"$a\" in --root=*) ;; *) verb=${verb:-$a};; "
                                 "esac; done\n"
                                 "case \"$verb\" in\n"
                                 "is-enabled) [ -e \"$state/enabled\" ] && echo enabled && "
                                 "exit 0; echo disabled; exit 1;;\n"
                                 "is-active) [ -e \"$state/active\" ] && echo active && exit "
                                 "0; echo inactive; exit 3;;\n"
                                 "enable) touch \"$state/enabled\";;\n"
                                 "disable) rm -f \"$state/enabled\";;\n"
                                 "start) touch \"$state/active\";;\n"
                                 "stop) rm -f \"$state/active\";;\n"
                                 "esac\n";
        ::chmod(script.c_str(), 0755);
        m_env = {{"GUA_SYSTEMCTL", script.string()}};
    }

    fs::path log() const { return root() / "systemctl.log"; }
    fs::path unit() const { return root() / "etc/systemd/system/gua.service"; }
    GuaRun run(const std::string& command, std::vector<std::string> args = {}) const {
        return gua(command, std::move(args), m_env);
    }

  private:
    std::map<std::string, std::string> m_env;
};

TEST_F(Service, StartInstallsEnablesAndStartsTheUnit) {
    const GuaRun started = run("start");
    ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
    EXPECT_TRUE(contains(started.out, "installing and enabling gua.service")) << started.out;
    const std::string unit_text = read_text(unit());
    EXPECT_TRUE(contains(unit_text, "Type=notify"));
    EXPECT_TRUE(contains(unit_text, "ExecStart=" + std::string(GUA_BINARY) + " daemon"));
    EXPECT_TRUE(contains(read_text(config_file()), "[daemon]"));
    const std::string calls = read_text(log());
    const std::string root_flag = "--root=" + root().string();
    EXPECT_EQ(calls, "daemon-reload\n" + root_flag + " enable gua.service\nstart gua.service\n");
    EXPECT_TRUE(contains(started.out, "gua is recording through gua.service")) << started.out;

    const json status = json::parse(run("status", {"--format", "json"}).out);
    EXPECT_EQ(status["running"], true);
    EXPECT_EQ(status["mode"], "systemd service");
    EXPECT_EQ(status["service"]["unit"], unit().string());
    EXPECT_EQ(status["service"]["enabled"], true);
    EXPECT_EQ(status["service"]["active"], "active");

    const GuaRun again = run("start");
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_TRUE(contains(again.out, "gua is already running (systemd service)")) << again.out;
    EXPECT_TRUE(contains(again.out, "Nothing to do.")) << again.out;
    EXPECT_FALSE(contains(read_text(log()).substr(calls.size()), "start gua.service"));
}

TEST_F(Service, StartCreatesTheSystemUserInTheRootTree) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "useradd --prefix needs root";
    }
    fs::create_directories(root() / "etc");
    for (const char* f : {"passwd", "group", "shadow", "gshadow"}) {
        std::ofstream(root() / "etc" / f);
    }
    const GuaRun started = run("start");
    ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
    EXPECT_TRUE(contains(started.out, "✓ run useradd --prefix " + root().string())) << started.out;
    EXPECT_TRUE(contains(read_text(root() / "etc/passwd"), "gua:x:"))
        << read_text(root() / "etc/passwd");
    EXPECT_FALSE(contains(run("start", {"--dry-run"}).out, "useradd"));
}

TEST_F(Service, StopAndUninstallGoThroughSystemctl) {
    ASSERT_EQ(run("start").exit_code, 0);
    const GuaRun stopped = run("stop");
    EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
    EXPECT_TRUE(contains(stopped.out, "stopping the systemd service")) << stopped.out;
    EXPECT_TRUE(contains(read_text(log()), "\nstop gua.service\n"));
    EXPECT_EQ(run("status").exit_code, 1);

    const GuaRun removed = run("uninstall");
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_TRUE(contains(read_text(log()), "--root=" + root().string() + " disable gua.service\n"));
    EXPECT_FALSE(fs::exists(unit()));
    EXPECT_TRUE(fs::exists(config_file())) << "uninstall without --purge keeps the config";
    EXPECT_TRUE(contains(read_text(log()), "disable gua.service\ndaemon-reload\n"));
    EXPECT_EQ(run("uninstall").out,
              "Nothing to uninstall: no gua.service installed, no daemon running.\n");
}

TEST_F(Service, IntervalFlagIsRejectedForTheService) {
    const GuaRun started = run("start", {"--interval", "5s"});
    EXPECT_EQ(started.exit_code, 2);
    EXPECT_TRUE(contains(started.err, "[daemon] interval")) << started.err;
    EXPECT_FALSE(fs::exists(unit()));
}

TEST_F(Service, RealSystemctlEnablesOfflineAndNeverTouchesTheHost) {
    if (std::system("systemctl --version >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "systemctl is not installed";
    }
    const GuaRun started = gua("start");
    ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
    const fs::path wants = root() / "etc/systemd/system/multi-user.target.wants/gua.service";
    EXPECT_TRUE(fs::is_symlink(wants)) << started.out;
    EXPECT_TRUE(contains(started.out, "– skip `systemctl start gua.service`")) << started.out;
    EXPECT_TRUE(contains(started.out, "installed and enabled in " + root().string()))
        << started.out;
    const json status = json::parse(gua("status", {"--format", "json"}).out);
    EXPECT_EQ(status["service"]["enabled"], true);
    EXPECT_EQ(status["running"], false);

    const GuaRun removed = gua("uninstall");
    EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_FALSE(fs::exists(wants));
    EXPECT_FALSE(fs::exists(unit()));
}

} // namespace
} // namespace gua::ops::testing

// SPDX-License-Identifier: Apache-2.0
// The policy under the service's credentials, for real: the gua daemon runs as an unprivileged
// uid with exactly the packaged unit's capability set (setpriv: CAP_KILL ambient and bounding,
// group tty, no new privileges) and acts on another uid's process; without CAP_KILL the
// terminate fails, the daemon's log and `gua doctor` say why.
#include "e2e/policy_harness.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gua::policy_e2e {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t k_daemon_uid = 1700;
constexpr std::uint32_t k_victim_uid = 1600;

#define GUA_REQUIRE_SETPRIV()                                                                      \
    GUA_REQUIRE_ROOT();                                                                            \
    if (!std::filesystem::exists("/usr/bin/setpriv")) {                                            \
        GTEST_SKIP() << "needs setpriv (util-linux) to run the daemon with chosen capabilities";   \
    }

/// The daemon of `s` as uid 1700 with `credentials` (setpriv options) and no new privileges.
std::unique_ptr<Child> start_daemon_as_service(const Scene& s,
                                               const std::vector<std::string>& credentials) {
    std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=" + std::to_string(k_daemon_uid),
                                  "--regid=" + std::to_string(k_daemon_uid)};
    argv.insert(argv.end(), credentials.begin(), credentials.end());
    argv.insert(argv.end(),
                {"--no-new-privs", GUA_BINARY, "daemon", "--nvml-library", fake_library(), "--db",
                 s.db(), "--interval", "1s", "--config", s.dir().file("gua.toml"), "--log",
                 s.dir().file("daemon.log"), "--quiet"});
    return std::make_unique<Child>(argv);
}

/// A rule terminating after 2 s and a notify rule after 1 s whose command records its own
/// /proc status; the scene's directory becomes the daemon's (it writes the database there).
void write_policy(Scene& s) {
    s.write("[policy]\nenabled = true\nnotify_command = \"cat /proc/$$/status > " + s.dir().path() +
            "/notify-status; true\"\n"
            "[[policy.rule]]\nname = \"warn\"\nafter = \"1s\"\naction = \"notify\"\n"
            "dry_run = false\n"
            "[[policy.rule]]\nname = \"reclaim\"\nafter = \"2s\"\naction = \"terminate\"\n"
            "dry_run = false\ngrace = \"2s\"\n");
    std::filesystem::create_directories(s.dir().path() + "/etc/gua");
    std::ofstream(s.dir().path() + "/etc/gua/gua.toml")
        << "[daemon]\ndb = \"/gua.db\"\n"
        << test::read_text(s.dir().file("gua.toml"));
    ASSERT_EQ(::chown(s.dir().path().c_str(), k_daemon_uid, k_daemon_uid), 0);
}

/// The line of `gua doctor --root <scene>` titled `title`.
std::string doctor_line(const Scene& s, const std::string& title) {
    const test::RunResult run = test::run_gua({"doctor", "--root", s.dir().path()});
    std::istringstream in(run.out);
    for (std::string line; std::getline(in, line);) {
        if (line.find(" " + title + ": ") != std::string::npos) {
            return line;
        }
    }
    return "(no line for " + title + " in)\n" + run.out;
}

std::string status_field(const std::string& text, const std::string& key) {
    const std::size_t at = text.find("\n" + key + ":");
    if (at == std::string::npos) {
        return "";
    }
    const std::size_t begin = text.find_first_not_of(" \t", at + key.size() + 2);
    return text.substr(begin, text.find('\n', begin) - begin);
}

TEST(PolicyPrivileges, WithTheUnitsCapabilitiesTerminateSucceedsOnAnotherUser) {
    GUA_REQUIRE_SETPRIV();
    Scene s;
    auto victim = start_as(k_victim_uid, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(victim->pid(), "sleep"));
    s.hold(victim->pid(), 8192);
    write_policy(s);
    auto daemon = start_daemon_as_service(s, {"--groups=5", "--inh-caps=-all,+kill",
                                              "--ambient-caps=+kill", "--bounding-set=-all,+kill"});
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'released'") == 1;
        },
        25s))
        << s.log();
    const std::string doctor = doctor_line(s, "policy terminate");
    Scene::stop_daemon(*daemon);

    const std::optional<int> status = victim->wait_exit(5s);
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE rule = 'reclaim' AND "
                       "outcome = 'released' AND uid = " +
                       std::to_string(k_victim_uid)),
              1);
    EXPECT_EQ(s.log().find("policy: warning"), std::string::npos) << s.log();
    EXPECT_TRUE(doctor.starts_with("✓ policy terminate: rule reclaim can signal other users' "
                                   "processes: the running foreground daemon (pid "))
        << doctor;
    EXPECT_NE(doctor.find(", uid 1700) has CAP_KILL"), std::string::npos) << doctor;

    // The notify command ran as the daemon's uid but without its capability.
    ASSERT_TRUE(
        eventually([&] { return std::filesystem::exists(s.dir().file("notify-status")); }, 5s));
    const std::string proc = test::read_text(s.dir().file("notify-status"));
    EXPECT_EQ(status_field(proc, "Uid"), "1700\t1700\t1700\t1700");
    EXPECT_EQ(status_field(proc, "CapAmb"), "0000000000000000");
    EXPECT_EQ(status_field(proc, "CapEff"), "0000000000000000");
    EXPECT_EQ(status_field(proc, "CapPrm"), "0000000000000000");
}

TEST(PolicyPrivileges, WithoutCapKillTerminateFailsAndDoctorSaysWhy) {
    GUA_REQUIRE_SETPRIV();
    Scene s;
    auto victim = start_as(k_victim_uid, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(victim->pid(), "sleep"));
    s.hold(victim->pid(), 8192);
    write_policy(s);
    auto daemon =
        start_daemon_as_service(s, {"--clear-groups", "--inh-caps=-all", "--bounding-set=-all"});
    ASSERT_TRUE(eventually(
        [&] {
            return s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = "
                            "'signal-failed'") == 1;
        },
        25s))
        << s.log();
    const std::string doctor_terminate = doctor_line(s, "policy terminate");
    const std::string doctor_notify = doctor_line(s, "policy notify");
    Scene::stop_daemon(*daemon);

    EXPECT_TRUE(victim->running()) << "an unprivileged daemon cannot signal another user";
    const std::string log = s.log();
    EXPECT_NE(log.find("policy: warning: terminate (rule reclaim) will fail on other users: uid "
                       "1700 has no CAP_KILL, so it may signal only its own processes; it needs "
                       "CAP_KILL"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("policy: warning: notify (rule warn) will fail on other users: uid 1700 "
                       "is not in group tty"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("signal-failed (SIGTERM failed: Operation not permitted (uid 1700 has no "
                       "CAP_KILL, so it may signal only its own processes; see `gua doctor`))"),
              std::string::npos)
        << log;
    EXPECT_TRUE(doctor_terminate.starts_with("✗ policy terminate: rule reclaim cannot signal "
                                             "other users' processes: the running foreground "
                                             "daemon (pid "))
        << doctor_terminate;
    EXPECT_NE(doctor_terminate.find(", uid 1700): uid 1700 has no CAP_KILL, so it may signal only "
                                    "its own processes — fix: run the daemon as the system "
                                    "service (`sudo gua start`)"),
              std::string::npos)
        << doctor_terminate;
    EXPECT_TRUE(doctor_notify.starts_with("✗ policy notify: rule warn cannot write to other "
                                          "users' terminals"))
        << doctor_notify;
}

} // namespace
} // namespace gua::policy_e2e

// SPDX-License-Identifier: Apache-2.0
// The actuator on real processes (children of the test only): the start-time guard, signals
// through a pidfd, notify's environment and command (started in a clean process state), and
// messages to pseudo-terminals, with and without the tty group.
#include "policy/notify.hpp"
#include "policy/privileges.hpp"
#include "policy/process_handle.hpp"
#include "policy/support.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <pty.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmpx.h>

namespace gua::policy {
namespace {

using policy_test::Child;

audit::ProcessKey key_of(pid_t pid) {
    const auto state = read_proc_state("/proc", static_cast<std::uint32_t>(pid));
    return {static_cast<std::uint32_t>(pid),
            state ? std::optional<std::uint64_t>(state->start_ticks) : std::nullopt};
}

bool alive(pid_t pid) {
    const auto state = read_proc_state("/proc", static_cast<std::uint32_t>(pid));
    return state && state->state != 'Z';
}

TEST(ProcessHandle, RefusesAPidWhoseStartTimeDiffers) {
    Child child({"/bin/sleep", "60"});
    ASSERT_GT(child.pid(), 0);
    audit::ProcessKey reused = key_of(child.pid());
    ASSERT_TRUE(reused.start_ticks);
    *reused.start_ticks += 1;
    const Result<ProcessHandle> h = ProcessHandle::open("/proc", reused);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.error().message, "pid reused");
    EXPECT_TRUE(alive(child.pid()));
    audit::ProcessKey unknown = key_of(child.pid());
    unknown.start_ticks.reset();
    EXPECT_FALSE(ProcessHandle::open("/proc", unknown).ok());
    EXPECT_TRUE(alive(child.pid()));
}

TEST(ProcessHandle, SignalsExactlyTheRecordedProcess) {
    Child child({"/bin/sleep", "60"});
    Result<ProcessHandle> h = ProcessHandle::open("/proc", key_of(child.pid()));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_FALSE(h.value().exited());
    ASSERT_TRUE(h.value().send(SIGTERM).ok());
    const pid_t pid = child.pid();
    for (int i = 0; i < 500 && child.running(); ++i) {
        ::usleep(10000);
    }
    EXPECT_TRUE(h.value().exited());
    const std::optional<int> status = child.wait_exit(std::chrono::seconds(5));
    ASSERT_TRUE(status) << pid;
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM);
}

TEST(ProcessHandle, AZombieIsGoneAndExited) {
    Child child({"/bin/sleep", "60"});
    Result<ProcessHandle> h = ProcessHandle::open("/proc", key_of(child.pid()));
    ASSERT_TRUE(h.ok());
    const audit::ProcessKey key = key_of(child.pid());
    ::kill(child.pid(), SIGKILL);
    for (int i = 0; i < 200 && alive(child.pid()); ++i) {
        ::usleep(10000);
    }
    EXPECT_TRUE(h.value().exited()) << "not reaped yet, but terminated";
    const Result<ProcessHandle> again = ProcessHandle::open("/proc", key);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().message, "gone");
}

Decision sample_decision() {
    Decision d;
    d.rule = "warn-2h";
    d.action = Action::notify;
    d.dry_run = false;
    Candidate& c = d.candidate;
    c.process = {4242, 987654};
    c.identity.user = "alice";
    c.identity.uid = 1500;
    c.identity.command = "python3";
    c.identity.container_id = "c0ffee";
    c.identity.slurm_job = "42";
    c.identity.jupyter_kernel = "3f2a";
    c.gpus = {GpuRef{0, "GPU-a"}, GpuRef{3, "GPU-d"}};
    c.memory_mib = 8294;
    c.idle_us = 2 * k_us_per_hour + 13 * k_us_per_minute + 500000;
    return d;
}

TEST(Notify, MessageAndEnvironment) {
    const Decision d = sample_decision();
    EXPECT_EQ(decision_message(d),
              "gua: your process 4242 (python3) has held 8.1 GiB on GPU 0,3 "
              "idle for 2h13m (policy rule \"warn-2h\"). Please free the GPU.");
    const std::vector<std::string> env = decision_environment(d, "node7");
    const std::vector<std::string> expected{"GUA_USER=alice",
                                            "GUA_UID=1500",
                                            "GUA_PID=4242",
                                            "GUA_START_TICKS=987654",
                                            "GUA_COMMAND=python3",
                                            "GUA_GPU=0,3",
                                            "GUA_GPU_UUID=GPU-a,GPU-d",
                                            "GUA_MEMORY_MIB=8294",
                                            "GUA_IDLE_SECONDS=7980",
                                            "GUA_RULE=warn-2h",
                                            "GUA_ACTION=notify",
                                            "GUA_CONTAINER=c0ffee",
                                            "GUA_SLURM_JOB=42",
                                            "GUA_JUPYTER_KERNEL=3f2a",
                                            "GUA_HOST=node7",
                                            "GUA_MESSAGE=" + decision_message(d)};
    EXPECT_EQ(env, expected);
}

TEST(Notify, CommandRunsWithTheFactsAndNoStaleVariables) {
    policy_test::TempDir dir;
    ::setenv("GUA_STALE", "from-the-parent", 1);
    const Result<pid_t> pid = spawn_shell("env | grep '^GUA_' | sort > " + dir.file("env"),
                                          decision_environment(sample_decision(), "node7"));
    ::unsetenv("GUA_STALE");
    ASSERT_TRUE(pid.ok()) << pid.error().message;
    int status = 0;
    ASSERT_EQ(::waitpid(pid.value(), &status, 0), pid.value());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const std::string text = test::read_text(dir.file("env"));
    EXPECT_NE(text.find("GUA_PID=4242\n"), std::string::npos) << text;
    EXPECT_NE(text.find("GUA_IDLE_SECONDS=7980\n"), std::string::npos);
    EXPECT_EQ(text.find("GUA_STALE"), std::string::npos);
}

TEST(Notify, WritesToTheUsersTerminalsOnly) {
    policy_test::TempDir dir;
    int master = -1;
    int slave = -1;
    char name[128] = {};
    ASSERT_EQ(::openpty(&master, &slave, name, nullptr, nullptr), 0);
    const std::string line = std::string(name).substr(5); // "pts/N"
    const std::string utmp = dir.file("utmp");
    ::close(::open(utmp.c_str(), O_CREAT | O_WRONLY, 0644));
    ASSERT_EQ(utmpxname(utmp.c_str()), 0);
    utmpx entry{};
    entry.ut_type = USER_PROCESS;
    entry.ut_pid = ::getpid();
    line.copy(entry.ut_line, sizeof(entry.ut_line) - 1);
    std::string("tester").copy(entry.ut_user, sizeof(entry.ut_user) - 1);
    setutxent();
    ASSERT_NE(pututxline(&entry), nullptr);
    endutxent();

    struct stat st {};
    ASSERT_EQ(::fstat(slave, &st), 0);
    ASSERT_EQ(::fchmod(slave, 0600), 0); // mesg n
    EXPECT_EQ(write_to_terminals(utmp, "/dev", st.st_uid, "muted"), 0);
    ASSERT_EQ(::fchmod(slave, 0620), 0); // mesg y
    EXPECT_EQ(write_to_terminals(utmp, "/dev", st.st_uid + 1, "not for you"), 0);
    EXPECT_EQ(write_to_terminals(utmp, "/dev", st.st_uid, "gua: hello"), 1);
    char buffer[256] = {};
    const ssize_t n = ::read(master, buffer, sizeof(buffer) - 1);
    ASSERT_GT(n, 0);
    const std::string got(buffer, static_cast<std::size_t>(n));
    EXPECT_NE(got.find("gua: hello"), std::string::npos) << got;
    EXPECT_EQ(got.find("not for you"), std::string::npos);
    EXPECT_EQ(got.find("muted"), std::string::npos) << "mesg n is respected, even by root";
    ::close(slave);
    ::close(master);
    utmpxname("/var/run/utmp");
}

/// In a child running as uid 1700 with `groups`, how many terminals write_to_terminals reached.
int written_as_unprivileged(const std::string& utmp, std::uint32_t owner,
                            const std::vector<gid_t>& groups) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::setgroups(groups.size(), groups.data()) != 0 || ::setresgid(1700, 1700, 1700) != 0 ||
            ::setresuid(1700, 1700, 1700) != 0) {
            ::_exit(100);
        }
        ::_exit(write_to_terminals(utmp, "/dev", owner, "gua: from the service"));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The notify action's privilege model under gua.service (User=gua, SupplementaryGroups=tty):
// another user's terminal is writable with group tty while it accepts messages, not otherwise.
TEST(Notify, TheTtyGroupReachesOtherUsersTerminalsThatAcceptMessages) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to change uids and terminal ownership";
    }
    const std::optional<std::uint32_t> tty = tty_group();
    ASSERT_TRUE(tty) << "no tty group in the group database";
    policy_test::TempDir dir;
    std::filesystem::permissions(dir.path(), std::filesystem::perms(0755)); // readable by uid 1700
    int master = -1;
    int slave = -1;
    char name[128] = {};
    ASSERT_EQ(::openpty(&master, &slave, name, nullptr, nullptr), 0);
    const std::string utmp = dir.file("utmp");
    ::close(::open(utmp.c_str(), O_CREAT | O_WRONLY, 0644));
    ASSERT_EQ(utmpxname(utmp.c_str()), 0);
    utmpx entry{};
    entry.ut_type = USER_PROCESS;
    entry.ut_pid = ::getpid();
    std::string(name).substr(5).copy(entry.ut_line, sizeof(entry.ut_line) - 1);
    setutxent();
    ASSERT_NE(pututxline(&entry), nullptr);
    endutxent();
    utmpxname("/var/run/utmp");
    ASSERT_EQ(::fchown(slave, 1600, *tty), 0);
    ASSERT_EQ(::fchmod(slave, 0620), 0);

    EXPECT_EQ(written_as_unprivileged(utmp, 1600, {}), 0) << "without group tty";
    EXPECT_EQ(written_as_unprivileged(utmp, 1600, {*tty}), 1) << "with group tty, mesg y";
    ASSERT_EQ(::fchmod(slave, 0600), 0);
    EXPECT_EQ(written_as_unprivileged(utmp, 1600, {*tty}), 0) << "with group tty, mesg n";
    char buffer[256] = {};
    const ssize_t n = ::read(master, buffer, sizeof(buffer) - 1);
    ASSERT_GT(n, 0);
    const std::string got(buffer, static_cast<std::size_t>(n));
    EXPECT_NE(got.find("gua: from the service"), std::string::npos) << got;
    EXPECT_EQ(got.find("gua: from the service"), got.rfind("gua: from the service"))
        << "written once: " << got;
    ::close(slave);
    ::close(master);
}

/// The value after "<key>:" in /proc status text.
std::string status_field(const std::string& text, const std::string& key) {
    const std::size_t at = text.find("\n" + key + ":");
    if (at == std::string::npos) {
        return "";
    }
    const std::size_t begin = text.find_first_not_of(" \t", at + key.size() + 2);
    return text.substr(begin, text.find('\n', begin) - begin);
}

// A notify command starts clean even when the daemon ignores SIGPIPE, blocks signals and holds
// descriptors without close-on-exec: default dispositions, an empty mask, only 0-2 open.
TEST(Notify, CommandStartsWithDefaultSignalsAndNoInheritedDescriptors) {
    policy_test::TempDir dir;
    struct sigaction ignore {};
    struct sigaction old_pipe {};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old_pipe), 0);
    sigset_t block;
    sigset_t old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGHUP);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
    const int leaked = ::open("/dev/null", O_RDONLY); // no O_CLOEXEC, like a careless log file

    // The shell records its own state with builtins only (a shell blocks signals around its
    // own forks, which a forked `cat` could catch); then ls, exec'd in its place, lists the
    // descriptors it inherited plus 3, its own handle on the directory it lists.
    const Result<pid_t> pid =
        spawn_shell("while read -r l; do echo \"$l\"; done < /proc/$$/status > " +
                        dir.file("status") + "; exec /bin/ls /proc/self/fd > " + dir.file("fds"),
                    {});
    ::close(leaked);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ASSERT_TRUE(pid.ok()) << pid.error().message;
    int status = 0;
    ASSERT_EQ(::waitpid(pid.value(), &status, 0), pid.value());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    const std::string proc = test::read_text(dir.file("status"));
    ASSERT_FALSE(proc.empty());
    const std::uint64_t ignored = std::stoull(status_field(proc, "SigIgn"), nullptr, 16);
    EXPECT_EQ(ignored & (std::uint64_t{1} << (SIGPIPE - 1)), 0U) << "SIGPIPE is not ignored";
    EXPECT_EQ(status_field(proc, "SigBlk"), "0000000000000000") << "nothing is blocked";
    EXPECT_EQ(status_field(proc, "CapAmb"), "0000000000000000");
    EXPECT_EQ(test::read_text(dir.file("fds")), "0\n1\n2\n3\n") << "descriptor " << leaked;
}

} // namespace
} // namespace gua::policy

// The actuator on real processes (children of the test only): the start-time guard, signals
// through a pidfd, notify's environment and command, and messages to a pseudo-terminal.
#include "policy/notify.hpp"
#include "policy/process_handle.hpp"
#include "policy/support.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <fstream>
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
    EXPECT_EQ(write_to_terminals(utmp, "/dev", st.st_uid + 1, "not for you"), 0);
    EXPECT_EQ(write_to_terminals(utmp, "/dev", st.st_uid, "gua: hello"), 1);
    char buffer[256] = {};
    const ssize_t n = ::read(master, buffer, sizeof(buffer) - 1);
    ASSERT_GT(n, 0);
    const std::string got(buffer, static_cast<std::size_t>(n));
    EXPECT_NE(got.find("gua: hello"), std::string::npos) << got;
    EXPECT_EQ(got.find("not for you"), std::string::npos);
    ::close(slave);
    ::close(master);
    utmpxname("/var/run/utmp");
}

} // namespace
} // namespace gua::policy

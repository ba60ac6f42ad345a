// End to end: the daemon's lifecycle — one daemon per database, SIGTERM finishes the tick and
// prints the totals, SIGHUP reopens the log and reloads the config, reports read while it writes.
#include "e2e/daemon_e2e.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace gua::e2e {
namespace {

class DaemonE2ELifecycle : public DaemonTest {
  protected:
    /// One card at 2 % with a holder of 8000 MiB (idle-held under the default thresholds).
    void write_idle_held_card() {
        write_scenario({{"devices", {{{"util", {{0, 2}}}}}},
                        {"processes", {holder(0, 8000, 0, static_cast<int>(getpid()))}}});
    }
};

TEST_F(DaemonE2ELifecycle, SecondDaemonOnTheSameDatabaseExitsWithCode4) {
    write_idle_held_card();
    auto first = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(first->wait_for("tick 0 ")) << first->err();
    const test::RunResult second = test::run_gua(daemon_args({"--ticks", "1"}), env());
    EXPECT_EQ(second.exit_code, 4);
    EXPECT_EQ(second.err, "gua: another gua daemon (pid " + std::to_string(first->pid()) +
                              ") is already recording to " + db() + "\n");
    // The first one is unharmed and keeps recording.
    const int ticks = test::count_of(first->err(), " tick ");
    EXPECT_TRUE(first->wait_for(" tick ", 10s, ticks + 1)) << first->err();
    first->signal(SIGTERM);
    EXPECT_EQ(first->wait_exit(5s), 0) << first->err();
}

TEST_F(DaemonE2ELifecycle, SigtermFinishesTheCurrentTickAndPrintsTheTotals) {
    write_idle_held_card();
    auto daemon = start_daemon({"--interval", "20s"});
    ASSERT_TRUE(daemon->wait_for("gua daemon started")) << daemon->err();
    std::this_thread::sleep_for(300ms);
    daemon->signal(SIGTERM);
    // Well before the 20 s tick would end on its own.
    const std::optional<int> code = daemon->wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << daemon->err();
    EXPECT_EQ(*code, 0) << daemon->err();
    const std::string log = daemon->err();
    EXPECT_NE(log.find(" tick 0  GPU-0=idle-held  (1 processes)"), std::string::npos) << log;
    EXPECT_NE(log.find("gua daemon stopped after 1 ticks; " + db() +
                       ": 1 card-tick rows written, 1 in total"),
              std::string::npos)
        << log;
    test::RawDb raw(db());
    // The interrupted tick was delivered with its real, shorter duration.
    const double duration_s = std::stod(raw.one("SELECT duration_us FROM card_tick")) / 1e6;
    EXPECT_GT(duration_s, 0);
    EXPECT_LT(duration_s, 10);
    EXPECT_NE(raw.one("SELECT ended_us FROM run"), "NULL");
}

TEST_F(DaemonE2ELifecycle, SighupReopensTheLogFileAndReloadsTheConfig) {
    write_idle_held_card();
    write_atomically(config_path(), "[thresholds]\nheld_mib = 100\n");
    const std::string log = path("daemon.log");
    const std::string rotated = path("daemon.log.1");
    auto daemon = start_daemon({"--interval", "200ms", "--log", log});
    ASSERT_TRUE(daemon->wait_for("tick 1  GPU-0=idle-held", 15s, 1, log)) << test::read_text(log);
    EXPECT_TRUE(daemon->err().empty()) << "with --log, nothing goes to stderr";

    // logrotate: rename, then HUP. The new threshold makes the 8000 MiB holder not count.
    std::filesystem::rename(log, rotated);
    write_atomically(config_path(), "[thresholds]\nheld_mib = 100000\n");
    daemon->signal(SIGHUP);
    ASSERT_TRUE(daemon->wait_for("configuration reloaded", 15s, 1, log)) << test::read_text(log);
    ASSERT_TRUE(daemon->wait_for("GPU-0=truly-idle", 15s, 1, log)) << test::read_text(log);
    EXPECT_EQ(test::read_text(log).find("GPU-0=idle-held"), std::string::npos);

    // A broken config is reported and the previous one kept.
    write_atomically(config_path(), "[thresholds]\nheld_mib = -1\n");
    daemon->signal(SIGHUP);
    ASSERT_TRUE(daemon->wait_for(
        "configuration not reloaded: " + config_path() + ":2: thresholds.held_mib", 15s, 1, log))
        << test::read_text(log);
    const int ticks = test::count_of(test::read_text(log), " tick ");
    ASSERT_TRUE(daemon->wait_for(" tick ", 15s, ticks + 1, log)) << "still recording";
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(5s), 0) << test::read_text(log);

    const std::string old_text = test::read_text(rotated);
    const std::string new_text = test::read_text(log);
    EXPECT_NE(old_text.find("gua daemon started"), std::string::npos);
    EXPECT_EQ(old_text.find("configuration reloaded"), std::string::npos) << old_text;
    EXPECT_EQ(new_text.find("gua daemon started"), std::string::npos) << new_text;
    EXPECT_NE(new_text.find("gua daemon stopped after"), std::string::npos) << new_text;
}

TEST_F(DaemonE2ELifecycle, ReportReadsTheDatabaseWhileTheDaemonWrites) {
    write_idle_held_card();
    auto daemon = start_daemon({"--interval", "100ms", "--quiet"});
    ASSERT_TRUE(daemon->wait_for("gua daemon started")) << daemon->err();
    ASSERT_TRUE(test::poll_until([&] { return file_exists(db() + "-wal"); }, 10s));
    std::uint64_t previous = 0;
    for (int i = 0; i < 5; ++i) {
        const test::RunResult r =
            test::run_gua({"report", "--db", db(), "--since", "1d", "--format", "json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::uint64_t samples = json::parse(r.out)["samples"].get<std::uint64_t>();
        EXPECT_GE(samples, previous);
        previous = samples;
        // Let the daemon write a few more ticks between reads.
        const std::uint64_t wanted = samples + 2;
        test::poll_until(
            [&] {
                test::RawDb raw(db());
                return std::stoull(raw.one("SELECT count(*) FROM card_tick")) >= wanted;
            },
            5s);
    }
    EXPECT_GE(previous, 4U);
    ASSERT_TRUE(daemon->running());
    daemon->signal(SIGINT);
    ASSERT_EQ(daemon->wait_exit(5s), 0) << daemon->err();
    const std::string log = daemon->err();
    EXPECT_EQ(log.find("not written"), std::string::npos) << log;
    EXPECT_EQ(log.find("GPU-0="), std::string::npos) << "--quiet: no tick lines";
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("PRAGMA journal_mode"), "wal");
}

// The daemon tells systemd (Type=notify, WatchdogSec=) when it is ready, that it is alive after a
// tick — as often as $WATCHDOG_USEC asks, at most every quarter of it —, and when it stops, through
// $NOTIFY_SOCKET, as a service manager would bind it.
class DaemonE2ENotify : public DaemonE2ELifecycle {
  protected:
    /// The states the daemon sent over a 3-tick run at 100 ms with the given $WATCHDOG_USEC
    /// ("" for none).
    std::vector<std::string> states_of_a_run(const std::string& watchdog_usec) {
        write_idle_held_card();
        const std::string name = path("notify");
        const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, name.c_str(), name.size());
        EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
        set_env("NOTIFY_SOCKET", name);
        set_env("WATCHDOG_USEC", watchdog_usec);
        const test::RunResult r = run_daemon({"--interval", "100ms", "--ticks", "3", "--quiet"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::vector<std::string> states;
        pollfd pfd{fd, POLLIN, 0};
        while (states.size() < 10 && ::poll(&pfd, 1, 0) == 1) {
            char buffer[64];
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            states.emplace_back(buffer, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
        }
        ::close(fd);
        return states;
    }
};

TEST_F(DaemonE2ENotify, PingsTheWatchdogAfterEveryTickWhenItsTimeoutIsThatShort) {
    EXPECT_EQ(states_of_a_run("1"), (std::vector<std::string>{"READY=1", "WATCHDOG=1", "WATCHDOG=1",
                                                              "WATCHDOG=1", "STOPPING=1"}));
}

TEST_F(DaemonE2ENotify, PingsTheWatchdogOncePerQuarterTimeout) {
    // WatchdogSec=120s: the first tick pings, the next ping would be due 30 s later.
    EXPECT_EQ(states_of_a_run("120000000"),
              (std::vector<std::string>{"READY=1", "WATCHDOG=1", "STOPPING=1"}));
}

TEST_F(DaemonE2ENotify, SendsNoKeepAliveWithoutAWatchdog) {
    EXPECT_EQ(states_of_a_run(""), (std::vector<std::string>{"READY=1", "STOPPING=1"}));
}

} // namespace
} // namespace gua::e2e

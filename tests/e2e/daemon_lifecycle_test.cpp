// SPDX-License-Identifier: Apache-2.0
// End to end: the daemon's lifecycle — one daemon per database by every path spelling, SIGTERM
// finishes the tick and prints the totals, SIGHUP reopens the log and reloads what it says it
// reloads, reports read while it writes.
#include "e2e/daemon_e2e.hpp"
#include "ops/lock_holder.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <regex>
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

// The lock lives on the database file itself: a symlink, a hard link, and deleting every lock
// file leave it in place, so the second daemon exits 4 each time; `gua status`'s lookup finds the
// first daemon through each spelling; only the first daemon's run and rows are in the file.
TEST_F(DaemonE2ELifecycle, EveryPathToTheDatabaseMeetsTheSameLock) {
    write_idle_held_card();
    auto first = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(first->wait_for("tick 0 ")) << first->err();
    const std::string symlink = path("symlink.db");
    const std::string hardlink = path("hardlink.db");
    std::filesystem::create_symlink(db(), symlink);
    std::filesystem::create_hard_link(db(), hardlink);
    for (const auto& entry : std::filesystem::directory_iterator(path(""))) {
        if (entry.path().extension() == ".lock") {
            std::filesystem::remove(entry.path());
        }
    }
    for (const std::string& spelling : {symlink, hardlink, db()}) {
        std::vector<std::string> args = daemon_args({"--ticks", "1"});
        args[2] = spelling;
        const test::RunResult second = test::run_gua(args, env());
        EXPECT_EQ(second.exit_code, 4) << spelling << ": " << second.err;
        EXPECT_EQ(second.err, "gua: another gua daemon (pid " + std::to_string(first->pid()) +
                                  ") is already recording to " + spelling + "\n");
        EXPECT_EQ(ops::database_lock_holder(spelling), first->pid()) << spelling;
    }
    const int ticks = test::count_of(first->err(), " tick ");
    EXPECT_TRUE(first->wait_for(" tick ", 10s, ticks + 1)) << first->err();
    first->signal(SIGTERM);
    ASSERT_EQ(first->wait_exit(5s), 0) << first->err();
    EXPECT_FALSE(ops::database_lock_holder(db()));
    EXPECT_FALSE(file_exists(db() + ".lock")) << "no side file any more";

    // One run, one row per tick the first daemon logged, the GPU's recorded time within wall time.
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM run"), "1");
    const int logged = test::count_of(first->err(), " tick ");
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), std::to_string(logged));
    const double recorded = std::stod(raw.one("SELECT sum(duration_us) FROM card_tick"));
    const double wall =
        std::stod(raw.one("SELECT max(t0_us + duration_us) - min(t0_us) FROM card_tick"));
    EXPECT_LE(recorded, wall * 1.01) << "recorded " << recorded << " µs in " << wall << " µs";
    EXPECT_NE(first->err().find(": " + std::to_string(logged) + " card-tick rows written, " +
                                std::to_string(logged) + " in total"),
              std::string::npos)
        << first->err();
}

// Deleting the database file (or putting another file in its place) while the daemon records:
// the daemon says so in its log, stops storing and exits 1 (systemd's Restart=on-failure then
// starts it on a new file); its stop line counts what it stored, not what it sampled.
TEST_F(DaemonE2ELifecycle, DatabaseDeletedUnderneathIsAnErrorAndTheStopLineCountsWhatWasStored) {
    write_idle_held_card();
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("tick 2 ")) << daemon->err();
    std::filesystem::remove(db());
    const std::optional<int> code = daemon->wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << daemon->err();
    EXPECT_EQ(*code, 1) << daemon->err();
    const std::string log = daemon->err();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        log, m,
        std::regex("gua daemon stopped after (\\d+) ticks; [^:]+: (\\d+) card-tick rows written, "
                   "(\\d+) in total \\((\\d+) ticks not stored: database [^ ]+ was deleted\\)")))
        << log;
    const int ticks = std::stoi(m[1]);
    const int stored = std::stoi(m[2]);
    EXPECT_EQ(ticks, test::count_of(log, "Z tick ")) << log;
    EXPECT_GE(stored, 3) << "ticks 0-2 were stored before the file was deleted";
    EXPECT_EQ(std::stoi(m[3]), stored) << "the file held exactly the rows counted as written";
    EXPECT_EQ(stored + std::stoi(m[4]), ticks) << "one card: every tick stored or not stored";
    // The first tick that found the file gone is named, once.
    EXPECT_EQ(test::count_of(log, "ERROR: database " + db() +
                                      " was deleted while the daemon was recording: tick " +
                                      std::to_string(stored) +
                                      " and later ones cannot be stored there; stopping"),
              1)
        << log;
    EXPECT_FALSE(file_exists(db()));
}

TEST_F(DaemonE2ELifecycle, DatabaseReplacedUnderneathIsAnError) {
    write_idle_held_card();
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("tick 1 ")) << daemon->err();
    write_atomically(db(), ""); // a new, empty file renamed over the database
    const std::optional<int> code = daemon->wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << daemon->err();
    EXPECT_EQ(*code, 1) << daemon->err();
    EXPECT_NE(daemon->err().find("ERROR: database " + db() + " was replaced by another file"),
              std::string::npos)
        << daemon->err();
    EXPECT_EQ(std::filesystem::file_size(db()), 0u) << "the new file was left alone";
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

    // logrotate: rename, then HUP. A new threshold is named and not applied: the rows, the
    // rollups, /metrics and the policy all keep classifying with the running one.
    std::filesystem::rename(log, rotated);
    write_atomically(config_path(), "[thresholds]\nheld_mib = 100000\n");
    daemon->signal(SIGHUP);
    ASSERT_TRUE(daemon->wait_for("configuration reloaded: [policy] and [retention] apply now; "
                                 "[thresholds], [pricing] and [daemon] keep their start-up values "
                                 "until the daemon restarts (the changed [thresholds] are not "
                                 "applied: active_util_pct 10, held_mib 100 stay in force)",
                                 15s, 1, log))
        << test::read_text(log);
    ASSERT_TRUE(daemon->wait_for("GPU-0=idle-held", 15s, 1, log)) << test::read_text(log);
    EXPECT_EQ(test::read_text(log).find("GPU-0=truly-idle"), std::string::npos);

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

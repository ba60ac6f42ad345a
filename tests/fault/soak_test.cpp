// SPDX-License-Identifier: Apache-2.0
// Soak (ctest label "soak"): the daemon at 10 Hz on the simulated clock for about 40 s of real
// time (thousands of ticks) while processes come and go — synthetic pids with short lives and
// real processes that exit. Its wall clock (test-only step) starts just after an hour begins; after
// 20 s of real time it jumps to the next hour, so the daemon rolls up all it recorded so far, at
// any machine speed. Resident memory and open descriptors, sampled from /proc, must stay flat:
// after the rollup no higher than before it plus a small slack.
#include "fault/fault_harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

namespace gua::fault {
namespace soak_test { // named after the file: unique in a unity batch

/// VmRSS of `pid` in KiB (0 when unreadable).
long rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("VmRSS:")) {
            return std::strtol(line.c_str() + 6, nullptr, 10);
        }
    }
    return 0;
}

/// Scenario seconds the daemon's clock has reached (0 before its first tick).
double scenario_seconds(const std::string& clock_file) {
    std::ifstream in(clock_file);
    double s = 0;
    in >> s;
    return s;
}

/// Open descriptors of `pid`.
long fd_count(pid_t pid) {
    std::error_code ec;
    long n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        ++n;
    }
    return n;
}

struct Samples {
    std::vector<long> rss;
    std::vector<long> fds;
    long max_rss() const { return rss.empty() ? 0 : *std::max_element(rss.begin(), rss.end()); }
    long max_fds() const { return fds.empty() ? 0 : *std::max_element(fds.begin(), fds.end()); }
};

class Soak : public FaultTest {};

TEST_F(Soak, MemoryAndDescriptorsStayFlatAtTenTicksPerSecondUnderProcessChurn) {
    // Real processes that exit one after another during the run, named by pid_env.
    std::vector<std::unique_ptr<test::BackgroundProcess>> sleepers;
    json processes = json::array();
    for (int i = 0; i < 10; ++i) {
        sleepers.push_back(std::make_unique<test::BackgroundProcess>(
            "/bin/sleep", std::vector<std::string>{std::to_string(2 + 3 * i)},
            std::map<std::string, std::string>{}, m_dir.path(), "sleeper" + std::to_string(i)));
        const std::string env_name = "SOAK_PID_" + std::to_string(i);
        set_env(env_name, std::to_string(sleepers.back()->pid()));
        json p = e2e::holder(i % 2, 1000 + 10 * i, 30, 0, env_name);
        p["until_exit"] = true;
        processes.push_back(p);
    }
    // Synthetic processes (pids no process has: their identity cannot be resolved), each alive
    // for 3 s of scenario time, a new one every 0.75 s for an hour of scenario time.
    for (int i = 0; i < 4800; ++i) {
        json p = e2e::holder(i % 2, 500 + i % 7, i % 3 == 0 ? 60 : 0, 4000000 + i);
        p["start"] = 0.75 * i;
        p["end"] = 0.75 * i + 3;
        processes.push_back(p);
    }
    write_scenario(
        {{"devices", {{{"util", e2e::square_wave(1, 2, 3000, 80, 5)}}, {{"util", {{0, 1}}}}}},
         {"processes", processes}});
    use_simulated_clock();
#if defined(__SANITIZE_ADDRESS__)
    // ASan keeps freed memory in quarantine (up to 256 MiB): without it, RSS shows the daemon's.
    const char* asan = std::getenv("ASAN_OPTIONS");
    set_env("ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") +
                                ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0");
#endif
    // The wall clock (test-only step, core/clock.hpp) starts 1 s into the next hour.
    const auto now_s = static_cast<double>(std::time(nullptr));
    const double step_s = std::ceil(now_s / 3600) * 3600 + 1 - now_s;
    e2e::write_atomically(path("clock.wall_step"), std::to_string(step_s));
    auto daemon = start_daemon({"--interval", "100ms", "--quiet"});
    ASSERT_TRUE(daemon->wait_for("gua daemon started")) << daemon->err();
    // Samples for `span`, or until the daemon's clock reaches `until_s` scenario seconds.
    const auto sample_for = [&](std::chrono::seconds span, Samples& out, double until_s = 1e9) {
        const auto end = std::chrono::steady_clock::now() + span;
        while (std::chrono::steady_clock::now() < end && daemon->running() &&
               scenario_seconds(path("clock")) < until_s) {
            out.rss.push_back(rss_kib(daemon->pid()));
            out.fds.push_back(fd_count(daemon->pid()));
            std::this_thread::sleep_for(100ms);
        }
    };
    Samples startup;
    Samples before;
    Samples after;
    sample_for(4s, startup);
    sample_for(16s, before, 3000); // a fast machine stops early, within the hour
    // The next hour begins: the daemon rolls up the hour it has recorded so far.
    const double hour_s = scenario_seconds(path("clock"));
    ASSERT_LT(hour_s, 3500) << "the first phase stays within its hour";
    e2e::write_atomically(path("clock.wall_step"), std::to_string(step_s + 3600 - hour_s));
    sample_for(20s, after);
    ASSERT_TRUE(daemon->running()) << daemon->err();
    const double reached_s = scenario_seconds(path("clock"));
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(20s), 0) << daemon->err();
    EXPECT_EQ(daemon->err().find("ERROR"), std::string::npos) << daemon->err();

    test::RawDb raw(db());
    const long ticks = std::stol(raw.one("SELECT count(DISTINCT t0_us) FROM card_tick"));
    const long processes_seen = std::stol(raw.one("SELECT count(*) FROM process"));
    const long rolled_ticks = std::stol(raw.one("SELECT coalesce(max(ticks), 0) FROM rollup_gpu"));
    std::printf("[soak] %ld ticks (%.0f scenario s), %ld processes, the largest rolled-up hour "
                "%ld ticks a card; RSS max %ld → %ld → %ld KiB, descriptors max %ld → %ld\n",
                ticks, reached_s, processes_seen, rolled_ticks, startup.max_rss(), before.max_rss(),
                after.max_rss(), before.max_fds(), after.max_fds());
    ASSERT_GE(after.rss.size(), 50u);
    EXPECT_GE(ticks, 1000) << "thousands of ticks, or the soak proves little";
    EXPECT_GE(processes_seen, 200) << "the churn reached the database";
    EXPECT_GE(rolled_ticks, 1000) << "the hourly rollup of what was recorded before the jump";
    EXPECT_LE(after.max_rss(), before.max_rss() + std::max(2048L, before.max_rss() / 10))
        << "resident memory grows (the hourly rollup included)";
    EXPECT_LE(after.max_fds(), before.max_fds() + 2) << "descriptors leak";
    EXPECT_EQ(integrity(), "ok");
}

} // namespace soak_test
} // namespace gua::fault

// Soak (ctest label "soak"): the daemon at 10 Hz on the simulated clock for about 40 s of real
// time (thousands of ticks) while processes come and go — synthetic pids with short lives and
// real processes that exit. The wall clock is set so that an hour ends half an hour of scenario
// time into the run: the daemon then rolls up a half hour of 10 Hz card-ticks. Its resident memory
// and open descriptors, sampled from /proc, must stay flat: never above the start-up level plus a
// small slack (the rollup included), and the second half's maximum no higher than the first's.
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
namespace {

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

struct Trend {
    long first_max = 0;
    long second_max = 0;
};

/// Maxima of the two halves of `samples` after dropping the first fifth (start-up).
Trend trend_of(const std::vector<long>& samples) {
    const std::size_t from = samples.size() / 5;
    const std::size_t mid = from + (samples.size() - from) / 2;
    Trend t;
    for (std::size_t i = from; i < samples.size(); ++i) {
        long& max = i < mid ? t.first_max : t.second_max;
        max = std::max(max, samples[i]);
    }
    return t;
}

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
    // for 3 s of scenario time, a new one every 0.5 s for 40 scenario minutes.
    for (int i = 0; i < 4800; ++i) {
        json p = e2e::holder(i % 2, 500 + i % 7, i % 3 == 0 ? 60 : 0, 4000000 + i);
        p["start"] = 0.5 * i;
        p["end"] = 0.5 * i + 3;
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
    // The wall clock (test-only step, core/clock.hpp) puts an hour's end at scenario 1800 s.
    constexpr double k_hour_end_s = 1800;
    const auto now_s = static_cast<double>(std::time(nullptr));
    const double hour_end = std::ceil((now_s + k_hour_end_s) / 3600) * 3600;
    e2e::write_atomically(path("clock.wall_step"), std::to_string(hour_end - now_s - k_hour_end_s));
    auto daemon = start_daemon({"--interval", "100ms", "--quiet"});
    ASSERT_TRUE(daemon->wait_for("gua daemon started")) << daemon->err();
    std::vector<long> rss;
    std::vector<long> fds;
    // At least 40 s, and until five scenario minutes after the hour's end (slow sanitizer builds
    // need longer), at most 150 s.
    const auto start = std::chrono::steady_clock::now();
    while (daemon->running() && std::chrono::steady_clock::now() < start + 150s &&
           (std::chrono::steady_clock::now() < start + 40s ||
            scenario_seconds(path("clock")) < k_hour_end_s + 300)) {
        rss.push_back(rss_kib(daemon->pid()));
        fds.push_back(fd_count(daemon->pid()));
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_TRUE(daemon->running()) << daemon->err();
    const double reached_s = scenario_seconds(path("clock"));
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(20s), 0) << daemon->err();
    EXPECT_EQ(daemon->err().find("ERROR"), std::string::npos) << daemon->err();

    test::RawDb raw(db());
    const long ticks = std::stol(raw.one("SELECT count(DISTINCT t0_us) FROM card_tick"));
    const long processes_seen = std::stol(raw.one("SELECT count(*) FROM process"));
    std::printf("[soak] %ld ticks (%.0f simulated s), %ld processes, %zu samples; RSS max %ld → "
                "%ld KiB, descriptors max %ld → %ld\n",
                ticks, reached_s, processes_seen, rss.size(), trend_of(rss).first_max,
                trend_of(rss).second_max, trend_of(fds).first_max, trend_of(fds).second_max);
    ASSERT_GE(rss.size(), 50u);
    EXPECT_GE(ticks, 1000) << "thousands of ticks, or the soak proves little";
    EXPECT_GE(processes_seen, 200) << "the churn reached the database";
    ASSERT_GE(reached_s, k_hour_end_s + 300) << "the run did not roll up an hour";
    EXPECT_GE(std::stol(raw.one("SELECT count(*) FROM rollup_hour")), 1);
    // Start-up (the first fifth of the samples) against the rest, rollup included.
    const long startup_max = *std::max_element(rss.begin(), rss.begin() + rss.size() / 5);
    const long later_max = *std::max_element(rss.begin() + rss.size() / 5, rss.end());
    EXPECT_LE(later_max, startup_max + std::max(4096L, startup_max / 5))
        << "resident memory grows (start-up " << startup_max << " KiB)";
    const Trend memory = trend_of(rss);
    EXPECT_LE(memory.second_max, memory.first_max + std::max(2048L, memory.first_max / 20))
        << "resident memory grows";
    const Trend descriptors = trend_of(fds);
    EXPECT_LE(descriptors.second_max, descriptors.first_max + 2) << "descriptors leak";
    EXPECT_EQ(integrity(), "ok");
}

} // namespace
} // namespace gua::fault

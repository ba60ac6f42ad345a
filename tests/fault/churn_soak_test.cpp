// SPDX-License-Identifier: Apache-2.0
// Soak (ctest label "soak"): 320 new processes a second of scenario time, each listed by the fake
// driver for one second — synthetic pids and real processes that exit — with the daemon at 10 Hz
// on the simulated clock for at most about 45 s of real time. Resident memory must not grow with
// the number of processes seen: the second half of the run ends no higher than the first.
#include "fault/fault_harness.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace gua::fault {
namespace churn_soak_test { // named after the file: unique in a unity batch

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

double scenario_seconds(const std::string& clock_file) {
    std::ifstream in(clock_file);
    double s = 0;
    in >> s;
    return s;
}

class SoakChurn : public FaultTest {};

TEST_F(SoakChurn, MemoryStaysFlatWithThreeHundredNewProcessesASecond) {
    constexpr int k_per_second = 320;
    constexpr int k_seconds = 150; // scenario seconds of churn: 48,000 processes
    json processes = json::array();
    // Real processes that exit during the run (resolved from the real /proc, then gone).
    std::vector<std::unique_ptr<test::BackgroundProcess>> sleepers;
    for (int i = 0; i < 40; ++i) {
        sleepers.push_back(std::make_unique<test::BackgroundProcess>(
            "/bin/sleep", std::vector<std::string>{std::to_string(1 + i % 20)},
            std::map<std::string, std::string>{}, m_dir.path(), "sleeper" + std::to_string(i)));
        const std::string env_name = "CHURN_PID_" + std::to_string(i);
        set_env(env_name, std::to_string(sleepers.back()->pid()));
        json p = e2e::holder(i % 2, 100, 0, 0, env_name);
        p["until_exit"] = true;
        processes.push_back(p);
    }
    for (int i = 0; i < k_per_second * k_seconds; ++i) {
        json p = e2e::holder(i % 2, 64, 0, 3000000 + i);
        p["start"] = static_cast<double>(i) / k_per_second;
        p["end"] = static_cast<double>(i) / k_per_second + 1;
        processes.push_back(p);
    }
    write_scenario(
        {{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}}}, {"processes", processes}});
    use_simulated_clock();
#if defined(__SANITIZE_ADDRESS__)
    const char* asan = std::getenv("ASAN_OPTIONS");
    set_env("ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") +
                                ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0");
#endif
    auto daemon = start_daemon({"--interval", "100ms", "--quiet"});
    ASSERT_TRUE(daemon->wait_for("gua daemon started")) << daemon->err();
    // RSS samples every 100 ms, by the scenario time they were taken at.
    std::vector<std::pair<double, long>> samples;
    const auto deadline = std::chrono::steady_clock::now() + 45s;
    while (std::chrono::steady_clock::now() < deadline && daemon->running() &&
           scenario_seconds(path("clock")) < k_seconds) {
        samples.emplace_back(scenario_seconds(path("clock")), rss_kib(daemon->pid()));
        std::this_thread::sleep_for(100ms);
    }
    const double reached_s = scenario_seconds(path("clock"));
    ASSERT_TRUE(daemon->running()) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(20s), 0) << daemon->err();

    // Start-up is the first tenth; then the first and second halves of what is left.
    const double from = reached_s / 10;
    const double middle = from + (reached_s - from) / 2;
    long first = 0;
    long second = 0;
    for (const auto& [t, rss] : samples) {
        if (t >= from) {
            long& half = t < middle ? first : second;
            half = std::max(half, rss);
        }
    }
    test::RawDb raw(db());
    const long seen = std::stol(raw.one("SELECT count(*) FROM process"));
    std::printf("[soak] %.0f scenario s, %ld processes seen; RSS max %ld KiB in the first half, "
                "%ld KiB in the second\n",
                reached_s, seen, first, second);
    // Under AddressSanitizer the daemon plays the scenario about a third slower: there the test
    // asks for 20 s of churn without a sanitizer finding or growth past the bound; the regular
    // build's 40 s are what show that a leak of 450 B a process is gone.
#if defined(__SANITIZE_ADDRESS__)
    constexpr double k_min_seconds = 20;
#else
    constexpr double k_min_seconds = 40;
#endif
    EXPECT_GE(reached_s, k_min_seconds) << "too few processes came and went to prove anything";
    EXPECT_GE(seen, static_cast<long>(k_min_seconds * k_per_second * 3 / 4));
    // 450 bytes a process seen would add about 6.5 MiB over 15,000 processes.
    EXPECT_LE(second, first + 2048) << "resident memory grows with the processes seen";
    EXPECT_EQ(integrity(), "ok");
}

} // namespace churn_soak_test
} // namespace gua::fault

// SPDX-License-Identifier: Apache-2.0
// Load test of /metrics on loopback: many concurrent scrapes, then slow-loris, oversized and
// over-the-limit clients while a scraper keeps scraping; the daemon must keep ticking on
// schedule. Bounded in count (≈ 2,600 requests) and time (≈ 30 s). Figures: docs/PERFORMANCE.md.
#include "fleet/daemon_host.hpp"
#include "fleet/http_client.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

namespace gua::fleet_testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr double k_interval_s = 0.5;

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double metric(std::uint16_t port, const std::string& name) {
    const std::string body = http_get(port, "/metrics").body;
    const std::size_t at = body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stod(body.substr(at + name.size() + 2));
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

nlohmann::json eight_cards() {
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json processes = nlohmann::json::array();
    for (int d = 0; d < 8; ++d) {
        devices.push_back({{"util", {{0, d * 12}}}});
        processes.push_back({{"device", d},
                             {"pid_env", "HOLDER"},
                             {"memory_mib", {{0, 1000 + d * 500}}},
                             {"sm_util", {{0, d * 12}}}});
    }
    return {{"driver_version", "550.54.15"}, {"devices", devices}, {"processes", processes}};
}

TEST(FleetMetricsLoad, ScrapesAndHostileClientsDoNotDelayTicks) {
    if (!fake_nvml_available()) {
        GTEST_SKIP() << "fake NVML not built: " << fake_nvml_library();
    }
    const test::TempDir temp;
    const std::filesystem::path dir = temp.path();
    const Holder holder(1001);
    const std::uint16_t port = free_port();
    DaemonHost daemon(dir, "host", eight_cards(), port, {{"HOLDER", holder.pid()}}, "500ms");
    ASSERT_TRUE(wait_for([&] { return metric(port, "gua_daemon_ticks_total") >= 1; }, 20s))
        << test::read_text(daemon.log());
    const auto t0 = Clock::now();
    const double ticks0 = metric(port, "gua_daemon_ticks_total");
    const std::size_t body_bytes = http_get(port, "/metrics").body.size();

    // Phase A: 16 concurrent scrapers × 150 scrapes.
    std::vector<double> latencies;
    std::mutex mutex;
    std::atomic<int> failures{0};
    const auto phase_a = Clock::now();
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < 16; ++t) {
            threads.emplace_back([&] {
                std::vector<double> mine;
                for (int i = 0; i < 150; ++i) {
                    const auto start = Clock::now();
                    const HttpResponse r = http_get(port, "/metrics");
                    mine.push_back(ms_since(start));
                    failures += r.status == 200 && r.body.size() > 1000 ? 0 : 1;
                }
                const std::lock_guard<std::mutex> lock(mutex);
                latencies.insert(latencies.end(), mine.begin(), mine.end());
            });
        }
        for (std::thread& t : threads) {
            t.join();
        }
    }
    const double phase_a_s = ms_since(phase_a) / 1000.0;
    EXPECT_EQ(failures.load(), 0);

    // Phase B (12 s): 40 slow-loris clients drip a header line every 500 ms, 20 clients send
    // 64 KiB headers, one client connects and says nothing; a scraper keeps scraping.
    std::atomic<bool> stop{false};
    std::vector<double> attacked;
    std::atomic<int> attacked_failures{0};
    std::thread scraper([&] {
        while (!stop.load()) {
            const auto start = Clock::now();
            const HttpResponse r = http_get(port, "/metrics");
            attacked.push_back(ms_since(start));
            attacked_failures += r.status == 200 ? 0 : 1;
            std::this_thread::sleep_for(50ms);
        }
    });
    std::vector<int> loris;
    for (int i = 0; i < 40; ++i) {
        const int fd = connect_loopback(port);
        ASSERT_GE(fd, 0);
        send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
        loris.push_back(fd);
    }
    const int idle = connect_loopback(port);
    const auto idle_since = Clock::now();
    std::atomic<int> refused_big{0};
    std::vector<double> big_ms;
    for (int i = 0; i < 20; ++i) {
        const auto start = Clock::now();
        const HttpResponse r = http_raw(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                                  std::string(64 * 1024, 'a') + "\r\n\r\n");
        big_ms.push_back(ms_since(start));
        refused_big += r.status == 431 || r.status == 0 ? 1 : 0;
    }
    double idle_closed_s = -1;
    const auto phase_b = Clock::now();
    while (ms_since(phase_b) < 12000) {
        for (const int fd : loris) {
            send_all(fd, "X-Drip: 1\r\n");
        }
        pollfd p{idle, POLLIN, 0};
        if (idle_closed_s < 0 && poll(&p, 1, 0) == 1) {
            char c = 0;
            if (recv(idle, &c, 1, 0) <= 0) {
                idle_closed_s = ms_since(idle_since) / 1000.0;
            }
        }
        std::this_thread::sleep_for(500ms);
    }
    stop = true;
    scraper.join();
    for (const int fd : loris) {
        close(fd);
    }
    close(idle);
    EXPECT_EQ(attacked_failures.load(), 0) << "40 slow clients stay below the connection limit";
    EXPECT_EQ(refused_big.load(), 20);
    EXPECT_GE(idle_closed_s, 9.0);
    EXPECT_LE(idle_closed_s, 12.5);

    // Phase C: 100 idle connections exceed the limit (64); then scrapes work again.
    std::vector<int> flood;
    for (int i = 0; i < 100; ++i) {
        flood.push_back(connect_loopback(port));
    }
    std::this_thread::sleep_for(200ms);
    const auto at_limit = Clock::now();
    const int at_limit_status = http_get(port, "/metrics").status;
    const double at_limit_ms = ms_since(at_limit);
    for (const int fd : flood) {
        if (fd >= 0) {
            close(fd);
        }
    }
    EXPECT_EQ(at_limit_status, 200) << "queued in the backlog until idle clients time out";
    EXPECT_LT(at_limit_ms, 11000);
    EXPECT_TRUE(wait_for([&] { return http_get(port, "/metrics").status == 200; }, 5s));

    const double elapsed_s = ms_since(t0) / 1000.0;
    const double ticks = metric(port, "gua_daemon_ticks_total") - ticks0;
    const double overruns = metric(port, "gua_daemon_tick_overruns_total");
    EXPECT_NEAR(ticks, elapsed_s / k_interval_s, 2.0);
    EXPECT_EQ(overruns, 0);
    EXPECT_EQ(test::read_text(daemon.log()).find("overran"), std::string::npos);
    EXPECT_EQ(daemon.stop(), 0);

    const std::string figures = fmt::format(
        "exposition {} bytes (8 cards); phase A: {} scrapes by 16 clients in {:.2f} s = {:.0f}/s, "
        "latency p50 {:.2f} ms p99 {:.2f} ms max {:.2f} ms; phase B (40 slow-loris, 20 × 64 KiB "
        "headers, 1 silent client): {} scrapes, p50 {:.2f} ms p99 {:.2f} ms max {:.2f} ms, "
        "oversized refused {}/20 in p50 {:.2f} ms, silent client closed after {:.1f} s; phase C "
        "(100 idle connections > limit 64): scrape status {} in {:.0f} ms at the limit; ticks {} "
        "in "
        "{:.1f} s at 500 ms (expected {:.1f}), overruns {}",
        body_bytes, latencies.size(), phase_a_s, static_cast<double>(latencies.size()) / phase_a_s,
        percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1.0),
        attacked.size(), percentile(attacked, 0.5), percentile(attacked, 0.99),
        percentile(attacked, 1.0), refused_big.load(), percentile(big_ms, 0.5), idle_closed_s,
        at_limit_status, at_limit_ms, ticks, elapsed_s, elapsed_s / k_interval_s, overruns);
    std::cout << "[ figures  ] " << figures << "\n";
    ::testing::Test::RecordProperty("figures", figures);
}

} // namespace
} // namespace gua::fleet_testing

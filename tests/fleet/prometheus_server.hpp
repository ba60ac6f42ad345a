// SPDX-License-Identifier: Apache-2.0
// Test helper: a real Prometheus (Debian's package) on loopback with temporary storage, scraping
// the given targets every second; readiness and target health are polled, never slept on.
#pragma once

#include "core/fatal.hpp"
#include "fleet/http_client.hpp"
#include "fleet/process.hpp"
#include "prometheus/api.hpp"
#include "support/run.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gua::fleet_testing {

inline constexpr const char* k_prometheus = "/usr/bin/prometheus";
inline constexpr const char* k_promtool = "/usr/bin/promtool";

/// Runs `promtool check metrics` on `exposition` (written to `file` first).
inline test::RunResult promtool_check_metrics(const std::string& exposition,
                                              const std::string& file) {
    std::ofstream(file) << exposition;
    return test::run("/bin/sh", {"-c", std::string(k_promtool) + " check metrics < " + file});
}

/// Polls `done` every `every` until it is true or `timeout` passes; returns its last answer.
inline bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                     std::chrono::milliseconds every = std::chrono::milliseconds(100)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(every);
    }
    return done();
}

/// Prometheus scraping `targets` ("127.0.0.1:PORT") as job `job`, stopped in the destructor.
/// `job_settings`: more lines of the job's scrape_config (e.g. scheme, tls_config, basic_auth),
/// each indented by four spaces.
class PrometheusServer {
  public:
    PrometheusServer(const std::filesystem::path& dir, const std::vector<std::string>& targets,
                     const std::string& job = "gua", const std::string& job_settings = "")
        : m_port(free_port()) {
        std::filesystem::create_directories(dir);
        std::ofstream config(dir / "prometheus.yml");
        config << "global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}\n"
               << "scrape_configs:\n  - job_name: " << job << "\n"
               << job_settings << "    static_configs:\n"
               << "      - targets: [";
        for (std::size_t i = 0; i < targets.size(); ++i) {
            config << (i > 0 ? ", " : "") << "'" << targets[i] << "'";
        }
        config << "]\n";
        config.close();
        m_process = std::make_unique<Process>(
            std::vector<std::string>{k_prometheus,
                                     "--config.file=" + (dir / "prometheus.yml").string(),
                                     "--storage.tsdb.path=" + (dir / "data").string(),
                                     "--storage.tsdb.retention.time=1d",
                                     "--web.listen-address=127.0.0.1:" + std::to_string(m_port)},
            Env{}, (dir / "prometheus.log").string());
        // Polled for as long as a test runs: a day for all the requests, 5 s for each.
        m_client =
            std::make_unique<report::PrometheusClient>(url(), k_us_per_day, 5 * k_us_per_second);
    }
    ~PrometheusServer() { m_process->stop(std::chrono::seconds(10)); }
    PrometheusServer(const PrometheusServer&) = delete;
    PrometheusServer& operator=(const PrometheusServer&) = delete;

    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    /// Waits for /-/ready.
    bool wait_ready(std::chrono::milliseconds timeout) {
        return wait_for([&] { return http_get(m_port, "/-/ready").status == 200; }, timeout);
    }

    /// The value of a scalar-like instant query now (the first series), or -1 when empty.
    double value(const std::string& promql) {
        try {
            const auto result = m_client->query(promql, wall_now());
            return result.empty() ? -1 : result.front().value;
        } catch (const Fatal&) {
            return -1;
        }
    }

    /// Waits until `promql` evaluates to at least `want`.
    bool wait_value(const std::string& promql, double want, std::chrono::milliseconds timeout) {
        return wait_for([&] { return value(promql) >= want; }, timeout,
                        std::chrono::milliseconds(200));
    }

  private:
    std::uint16_t m_port;
    std::unique_ptr<Process> m_process;
    std::unique_ptr<report::PrometheusClient> m_client;
};

} // namespace gua::fleet_testing

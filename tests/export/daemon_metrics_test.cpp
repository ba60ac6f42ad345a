// SPDX-License-Identifier: Apache-2.0
// The real daemon on the fake NVML with --listen: promtool accepts its exposition, its counters
// survive a restart (restored from the database) and advance only with what was stored.
#include "export/exposition_parse.hpp"
#include "fleet/daemon_host.hpp"
#include "fleet/http_client.hpp"
#include "fleet/prometheus_server.hpp"
#include "ops/lock_holder.hpp"
#include "support/run.hpp"
#include "support/small_fs.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <regex>
#include <sys/mount.h>
#include <unistd.h>

namespace gua::exporter {
namespace {

using namespace std::chrono_literals;
using namespace fleet_testing;
using nlohmann::json;

json scenario() {
    return {{"driver_version", "550.54.15"},
            {"devices",
             {{{"util", {{0, 90}}}, {"name", "Tesla \"V100\" \\ SXM2"}}, {{"util", {{0, 0}}}}}},
            {"processes",
             {{{"device", 0},
               {"pid_env", "HOLDER"},
               {"memory_mib", {{0, 9000}}},
               {"sm_util", {{0, 90}}}}}}};
}

class ExportDaemon : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!fake_nvml_available()) {
            GTEST_SKIP() << "fake NVML not built: " << fake_nvml_library();
        }
        m_dir = m_temp.path();
        std::ofstream(m_dir / "scenario.json") << scenario().dump();
        std::ofstream(m_dir / "empty.toml").close();
    }

    /// Starts `gua daemon` with --listen 127.0.0.1:0 and extra flags; returns it and its port.
    std::pair<std::unique_ptr<Process>, std::uint16_t>
    start(const std::vector<std::string>& extra, const std::string& log, std::string db = "") {
        if (db.empty()) {
            db = (m_dir / "gua.db").string();
        }
        std::vector<std::string> argv{GUA_BINARY,       "daemon",
                                      "--db",           db,
                                      "--listen",       "127.0.0.1:0",
                                      "--nvml-library", fake_nvml_library(),
                                      "--config",       (m_dir / "empty.toml").string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto p = std::make_unique<Process>(
            argv,
            Env{{"GUA_FAKE_NVML_SCENARIO", (m_dir / "scenario.json").string()},
                {"HOLDER", m_holder.pid()}},
            (m_dir / log).string());
        std::uint16_t port = 0;
        const std::regex serving(R"(serving Prometheus metrics on http://127\.0\.0\.1:(\d+)/)");
        wait_for(
            [&] {
                std::smatch match;
                const std::string text = test::read_text((m_dir / log).string());
                if (std::regex_search(text, match, serving)) {
                    port = static_cast<std::uint16_t>(std::stoi(match[1]));
                }
                return port != 0 || !p->running();
            },
            20s, 20ms);
        return {std::move(p), port};
    }

    test::TempDir m_temp;
    std::filesystem::path m_dir;
    Holder m_holder{1001};
};

TEST_F(ExportDaemon, PromtoolAcceptsARealScrape) {
    if (access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh --test)";
    }
    auto [daemon, port] = start({"--interval", "200ms", "--price-per-gpu-hour", "2.5"}, "a.log");
    ASSERT_NE(port, 0) << test::read_text((m_dir / "a.log").string());
    ASSERT_TRUE(wait_for(
        [&, p = port] {
            return http_get(p, "/metrics").body.find("gua_daemon_ticks_total 3") !=
                   std::string::npos;
        },
        20s));
    const HttpResponse r = http_get(port, "/metrics");
    const auto series = testing::parse_exposition(r.body);
    EXPECT_TRUE(series.contains(R"(gua_waste_dollars_total{gpu="1",state="truly_idle"})"));
    EXPECT_NE(r.body.find(R"(model="Tesla \"V100\" \\ SXM2")"), std::string::npos);
    const test::RunResult lint = promtool_check_metrics(r.body, m_temp.file("scrape.txt"));
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
    EXPECT_EQ(daemon->stop(10s), 0);
}

// What the packaged service does once gua.toml says `[daemon] listen`: no --listen and no price
// on the command line. The daemon serves, and prices the dollar counter with the built-in example
// prices of [pricing] (H100 4.00 per GPU-hour, docs/configuration.md), as the report does.
TEST_F(ExportDaemon, ServesFromTheConfigAloneAndPricesWithTheExamplePrices) {
    json s = scenario();
    s["devices"][1]["name"] = "NVIDIA H100 80GB HBM3";
    std::ofstream(m_dir / "scenario.json") << s.dump();
    std::ofstream(m_dir / "service.toml") << "[daemon]\nlisten = \"127.0.0.1:0\"\n";
    const std::string log = (m_dir / "service.log").string();
    Process daemon({GUA_BINARY, "daemon", "--db", (m_dir / "gua.db").string(), "--interval",
                    "200ms", "--nvml-library", fake_nvml_library(), "--config",
                    (m_dir / "service.toml").string()},
                   Env{{"GUA_FAKE_NVML_SCENARIO", (m_dir / "scenario.json").string()},
                       {"HOLDER", m_holder.pid()}},
                   log);
    std::uint16_t port = 0;
    const std::regex serving(R"(serving Prometheus metrics on http://127\.0\.0\.1:(\d+)/)");
    ASSERT_TRUE(wait_for(
        [&] {
            std::smatch match;
            const std::string text = test::read_text(log);
            if (std::regex_search(text, match, serving)) {
                port = static_cast<std::uint16_t>(std::stoi(match[1]));
            }
            return port != 0 || !daemon.running();
        },
        20s, 20ms));
    ASSERT_NE(port, 0) << test::read_text(log);
    ASSERT_TRUE(wait_for(
        [&] {
            return http_get(port, "/metrics").body.find("gua_daemon_ticks_total 3") !=
                   std::string::npos;
        },
        20s));
    const auto series = testing::parse_exposition(http_get(port, "/metrics").body);
    const std::string card1 = R"(gpu="1",uuid="GPU-00000000-0000-0000-0000-000000000001")";
    const double idle_seconds =
        series.at("gua_gpu_seconds_total{" + card1 + R"(,model="NVIDIA H100 80GB HBM3",)" +
                  R"(state="truly_idle"})");
    EXPECT_GT(idle_seconds, 0);
    EXPECT_NEAR(series.at(R"(gua_waste_dollars_total{gpu="1",state="truly_idle"})"),
                idle_seconds * 4.00 / 3600, 1e-9);
    EXPECT_EQ(daemon.stop(10s), 0);
}

TEST_F(ExportDaemon, CountersSurviveARestart) {
    auto [first, first_port] = start({"--interval", "1s", "--ticks", "3"}, "first.log");
    ASSERT_NE(first_port, 0) << test::read_text((m_dir / "first.log").string());
    ASSERT_TRUE(wait_for([&, &p = first] { return !p->running(); }, 30s));

    // Before its first tick (5 s) the second daemon serves what the database holds.
    auto [second, port] = start({"--interval", "5s"}, "second.log");
    ASSERT_NE(port, 0) << test::read_text((m_dir / "second.log").string());
    const auto series = testing::parse_exposition(http_get(port, "/metrics").body);
    const std::string card0 = R"({gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000",)"
                              R"(model="Tesla \"V100\" \\ SXM2")";
    EXPECT_DOUBLE_EQ(series.at("gua_gpu_card_ticks_total" + card0 + "}"), 3);
    EXPECT_NEAR(series.at("gua_gpu_seconds_total" + card0 + R"(,state="active"})"), 3, 0.2);
    double identities = 0;
    double held_or_active = 0;
    for (const auto& [name, value] : series) {
        identities += name.starts_with("gua_identity_gpu_seconds_total{") ? value : 0;
        const bool card = name.starts_with("gua_gpu_seconds_total{");
        held_or_active += card && (name.ends_with(R"(state="active"})") ||
                                   name.ends_with(R"(state="idle_held"})"))
                              ? value
                              : 0;
    }
    EXPECT_NEAR(identities, held_or_active, 1e-6) << "no double counting after a restore";
    EXPECT_EQ(series.count("gua_daemon_last_tick_timestamp_seconds"), 0u);
    EXPECT_EQ(second->stop(10s), 0);
}

// The database on a 4 MiB tmpfs that fills up while the daemon records: ticks that cannot be
// stored show in gua_write_errors_total and in no audit counter (one scrape: card-ticks of a card
// = ticks sampled − ticks not stored), the daemon publishes the alert `gua status` shows, says when
// writes succeed again, its stop line counts the rows in the file, and a restart (which rebuilds
// the counters from the file) never lowers them.
TEST_F(ExportDaemon, CountersAdvanceOnlyWithWhatWasStoredOnAFullDisk) {
    const test::Tmpfs small((m_dir / "small").string(), "4m");
    if (!small.mounted()) {
        GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
    }
    const std::string db = (m_dir / "small" / "gua.db").string();
    auto [daemon, port] = start({"--interval", "200ms", "--quiet"}, "full.log", db);
    ASSERT_NE(port, 0) << test::read_text((m_dir / "full.log").string());
    const auto scrape = [&, p = port] {
        return testing::parse_exposition(http_get(p, "/metrics").body);
    };
    const std::string card0 = R"(gua_gpu_card_ticks_total{gpu="0",uuid="GPU-00000000-0000-0000-)"
                              R"(0000-000000000000",model="Tesla \"V100\" \\ SXM2"})";
    ASSERT_TRUE(wait_for([&] { return scrape()["gua_daemon_ticks_total"] >= 3; }, 20s));

    test::fill_file_system((m_dir / "small" / "filler").string());
    std::map<std::string, double> failing;
    ASSERT_TRUE(wait_for(
        [&] {
            failing = scrape();
            return failing["gua_write_errors_total"] >= 3;
        },
        30s))
        << test::read_text((m_dir / "full.log").string());
    ASSERT_TRUE(failing.contains(card0)) << http_get(port, "/metrics").body;
    EXPECT_EQ(failing.at(card0),
              failing.at("gua_daemon_ticks_total") - failing.at("gua_write_errors_total"));
    EXPECT_EQ(failing.at(R"(gua_daemon_errors_total{kind="db_write"})"),
              failing.at("gua_write_errors_total"));
    EXPECT_TRUE(wait_for(
        [&] {
            const std::vector<ops::DaemonAlert> alerts = ops::database_alerts(db);
            return alerts == std::vector<ops::DaemonAlert>{ops::DaemonAlert::writes_failing};
        },
        10s));

    std::filesystem::remove(m_dir / "small" / "filler");
    ASSERT_TRUE(wait_for(
        [&] {
            return test::read_text((m_dir / "full.log").string()).find("writes succeed again") !=
                   std::string::npos;
        },
        30s))
        << test::read_text((m_dir / "full.log").string());
    const std::map<std::string, double> last = scrape();
    EXPECT_EQ(last.at(card0),
              last.at("gua_daemon_ticks_total") - last.at("gua_write_errors_total"));
    EXPECT_EQ(daemon->stop(10s), 0);
    EXPECT_TRUE(ops::database_alerts(db).empty());

    const std::string log = test::read_text((m_dir / "full.log").string());
    const test::StopLine stop = test::stop_line(log);
    ASSERT_TRUE(stop.found) << log;
    EXPECT_EQ(stop.rows_written, stop.rows_total) << "the stop line counts what the file holds";
    EXPECT_EQ(stop.rows_written, 2 * (stop.ticks - stop.not_stored)) << "two cards per tick";
    EXPECT_GE(stop.not_stored, 3);

    // Restarted: the counters rebuilt from the file are what the first daemon last served, or
    // more (its ticks after that scrape), never less.
    auto [second, second_port] = start({"--interval", "5s"}, "second.log", db);
    ASSERT_NE(second_port, 0) << test::read_text((m_dir / "second.log").string());
    const auto restored = testing::parse_exposition(http_get(second_port, "/metrics").body);
    EXPECT_EQ(restored.at(card0), stop.rows_written / 2);
    EXPECT_GE(restored.at(card0), last.at(card0));
    EXPECT_EQ(second->stop(10s), 0);
}

} // namespace
} // namespace gua::exporter

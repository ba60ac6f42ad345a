// SPDX-License-Identifier: Apache-2.0
// The daemon's policy notify through a webhook whose receiver hangs: the notice is retried with
// backoff on the delivery thread while the ticks keep their schedule (their recorded start
// times, not wall-clock thresholds), the JSON payload carries the decision's facts, and /metrics
// counts the retries and the delivery.
#include "e2e/policy_harness.hpp"
#include "notify/servers.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace gua::notify_test {
namespace daemon_delivery_test { // named after the file: unique in a unity batch

using nlohmann::json;
using policy_e2e::Scene;

std::string metrics(int port) {
    return test::run("/usr/bin/curl", {"-sS", "--max-time", "5",
                                       "http://127.0.0.1:" + std::to_string(port) + "/metrics"})
        .out;
}

/// The value of the exposition line that starts with `series` (-1 when absent).
double sample(const std::string& exposition, const std::string& series) {
    for (const std::string& line : lines_of(exposition)) {
        if (line.starts_with(series + " ")) {
            return std::stod(line.substr(series.size() + 1));
        }
    }
    return -1;
}

TEST(DeliveryDaemon, AHangingReceiverIsRetriedWhileTicksKeepTheirSchedule) {
    GUA_REQUIRE_ROOT();
    Scene s;
    test::TempDir web;
    Server receiver = start_receiver(web, 0, 2); // the first two posts are never answered
    ASSERT_GT(receiver.port, 0) << receiver.process->err();
    auto alice = policy_e2e::start_as(1500, "/bin/sleep", {"120"});
    ASSERT_TRUE(policy_e2e::wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("[policy]\nenabled = true\n[[policy.rule]]\nname = \"warn\"\nafter = \"2s\"\n"
            "action = \"notify\"\ndry_run = false\n\n[webhook.hook]\nkind = \"json\"\n"
            "url = \"http://127.0.0.1:" +
            std::to_string(receiver.port) +
            "/hook/s3cret\"\nfor = \"policy\"\ntimeout = \"2s\"\n\n"
            "[delivery]\nattempts = 3\nbackoff = \"500ms\"\n");
    auto daemon = std::make_unique<policy_test::Child>(std::vector<std::string>{
        GUA_BINARY, "daemon", "--nvml-library", policy_e2e::fake_library(), "--db", s.db(),
        "--interval", "1s", "--config", s.dir().file("gua.toml"), "--log",
        s.dir().file("daemon.log"), "--quiet", "--listen", "127.0.0.1:0"});
    std::smatch match;
    std::string log;
    ASSERT_TRUE(policy_e2e::eventually(
        [&] {
            log = s.log();
            return std::regex_search(
                log, match,
                std::regex(R"(serving Prometheus metrics on http://127\.0\.0\.1:(\d+))"));
        },
        std::chrono::seconds(30)))
        << log;
    const int port = std::stoi(match[1]);
    const std::string delivered =
        R"(gua_notify_deliveries_total{transport="webhook.hook",outcome="delivered"})";
    ASSERT_TRUE(policy_e2e::eventually([&] { return sample(metrics(port), delivered) == 1; },
                                       std::chrono::seconds(40)))
        << s.log() << metrics(port);
    const std::string exposition = metrics(port);
    Scene::stop_daemon(*daemon);

    EXPECT_EQ(sample(exposition, R"(gua_notify_retries_total{transport="webhook.hook"})"), 2);
    EXPECT_EQ(sample(exposition,
                     R"(gua_notify_deliveries_total{transport="webhook.hook",outcome="failed"})"),
              0);
    EXPECT_EQ(sample(exposition, "gua_daemon_tick_overruns_total"), 0);

    // Three attempts: each hung one ended by the 2 s timeout, then 500 ms and 1 s of backoff.
    const std::vector<json> posts = received(web);
    ASSERT_EQ(posts.size(), 3u);
    const double t0 = posts[0]["t"], t1 = posts[1]["t"], t2 = posts[2]["t"];
    RecordProperty("attempt_gaps_s", std::to_string(t1 - t0) + " " + std::to_string(t2 - t1));
    // Less 20 ms: the receiver stamps a post when it arrives, a few ms after the attempt began.
    EXPECT_GE(t1 - t0, 2.0 + 0.5 - 0.02);
    EXPECT_GE(t2 - t1, 2.0 + 1.0 - 0.02);
    EXPECT_GT((t2 - t1) - (t1 - t0), 0.5 - 0.04) << "the backoff doubles";

    // The ticks recorded while the receiver hung kept the 1 s schedule.
    std::vector<std::int64_t> ticks;
    {
        store::Database db(s.db(), store::OpenMode::read_only);
        const auto from = static_cast<std::int64_t>(t0 * 1e6);
        const auto to = static_cast<std::int64_t>(t2 * 1e6);
        store::Statement st =
            db.prepare("SELECT DISTINCT t0_us FROM card_tick WHERE t0_us BETWEEN " +
                       std::to_string(from) + " AND " + std::to_string(to) + " ORDER BY t0_us");
        while (st.step()) {
            ticks.push_back(st.int64(0));
        }
    }
    ASSERT_GE(ticks.size(), 5u);
    for (std::size_t i = 1; i < ticks.size(); ++i) {
        EXPECT_NEAR(static_cast<double>(ticks[i] - ticks[i - 1]), 1e6, 0.1e6) << "tick " << i;
    }

    // The payload: the decision's facts.
    const json p = json::parse(posts[2]["body"].get<std::string>());
    EXPECT_EQ(posts[2]["path"], "/hook/s3cret");
    EXPECT_EQ(p["source"], "gua");
    EXPECT_EQ(p["event"], "policy");
    EXPECT_EQ(p["rule"], "warn");
    EXPECT_EQ(p["action"], "notify");
    EXPECT_EQ(p["dry_run"], false);
    EXPECT_EQ(p["pid"], alice->pid());
    EXPECT_EQ(p["uid"], 1500);
    EXPECT_EQ(p["user"], policy_e2e::label(1500));
    EXPECT_EQ(p["gpus"], json::array({0}));
    EXPECT_EQ(p["memory_mib"], 8192);
    EXPECT_GE(p["idle_seconds"].get<int>(), 2);
    EXPECT_NE(p["text"].get<std::string>().find("has held 8.0 GiB on GPU 0 idle"),
              std::string::npos);
    EXPECT_EQ(s.scalar("SELECT count(*) FROM policy_decision WHERE outcome = 'notified'"), 1);
    // One log line per failed attempt, the URL's path never in it.
    const std::string final_log = s.log();
    EXPECT_EQ(test::count_of(final_log, "webhook.hook for user"), 2) << final_log;
    EXPECT_EQ(final_log.find("s3cret"), std::string::npos) << final_log;
}

} // namespace daemon_delivery_test
} // namespace gua::notify_test

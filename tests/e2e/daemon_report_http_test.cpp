// SPDX-License-Identifier: Apache-2.0
// End to end: `gua daemon --listen` on the fake driver serves the report beside /metrics — / as
// HTML, /report.json equal to `gua report --format json` for the same window, the command line's
// validation as one-line 400s — while it keeps recording.
#include "core/time.hpp"
#include "e2e/daemon_e2e.hpp"
#include "fleet/http_client.hpp"

#include <pwd.h>
#include <regex>
#include <unistd.h>

namespace gua::e2e {
namespace {

using fleet_testing::http_get;

class DaemonE2EReportHttp : public DaemonTest {};

TEST_F(DaemonE2EReportHttp, ServesTheReportBesideMetricsWhileRecording) {
    write_scenario(
        {{"devices",
          {{{"name", "NVIDIA A100-SXM4-80GB"}, {"memory_total_mib", 81920}, {"util", {{0, 80}}}},
           {{"name", "NVIDIA A100-SXM4-80GB"}, {"memory_total_mib", 81920}, {"util", {{0, 0}}}}}},
         {"processes", {holder(1, 4000, 0, static_cast<int>(getpid()))}}});
    auto daemon = start_daemon({"--interval", "200ms", "--quiet", "--listen", "127.0.0.1:0"});
    ASSERT_TRUE(daemon->wait_for("serving the report on", 30s)) << daemon->err();
    std::smatch match;
    const std::string log = daemon->err();
    ASSERT_TRUE(std::regex_search(
        log, match, std::regex(R"(serving the report on http://127\.0\.0\.1:(\d+)/ )")))
        << log;
    const auto port = static_cast<std::uint16_t>(std::stoi(match[1]));
    // Ten ticks recorded; the window ends now and is queried once the daemon has gone on for
    // ten more ticks (every tick that started in it is stored then).
    const auto card_ticks = [&] {
        return std::stoi(test::RawDb(db()).one("SELECT count(*) FROM card_tick"));
    };
    ASSERT_TRUE(test::poll_until([&] { return card_ticks() >= 20; }, 60s));
    const TimeUs end = wall_now();
    const int seen = card_ticks();
    ASSERT_TRUE(test::poll_until([&] { return card_ticks() >= seen + 20; }, 60s));
    const std::string to = format_iso8601(end + k_us_per_second); // seconds precision, rounded up
    const std::string from = format_iso8601(end - k_us_per_hour);
    const std::string query = "/report.json?from=" + from + "&to=" + to;

    const auto first = http_get(port, query);
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_NE(first.headers.find("Content-Type: application/json"), std::string::npos);
    const test::RunResult cli = test::run_gua({"report", "--db", db(), "--config", config_path(),
                                               "--from", from, "--to", to, "--format", "json"});
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto second = http_get(port, query);
    // An hour's rollup written between the requests may change the last digit of a float sum:
    // the command line's report equals the page computed before or after it.
    const json expected = json::parse(cli.out);
    EXPECT_TRUE(json::parse(first.body) == expected || json::parse(second.body) == expected)
        << first.body;
    EXPECT_GE(expected["samples"].get<int>(), 20);
    const std::string me = getpwuid(getuid())->pw_name;
    EXPECT_GT(identity_row(expected, me)["idle_held_gpu_hours"].get<double>(), 0);

    const auto root = http_get(port, "/");
    ASSERT_EQ(root.status, 200);
    EXPECT_NE(root.headers.find("Content-Type: text/html; charset=utf-8"), std::string::npos);
    EXPECT_EQ(root.body.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(root.body.find("(1w)"), std::string::npos) << "the last 7 days";
    EXPECT_NE(root.body.find("<td>" + me + "</td>"), std::string::npos);
    EXPECT_EQ(http_get(port, "/", "HEAD").body, "");
    const auto gpu = http_get(port, "/report?gpu=1&since=1h");
    EXPECT_EQ(gpu.status, 200);
    EXPECT_NE(gpu.body.find("<span class=\"badge\">gpu=1</span>"), std::string::npos);

    const test::RunResult bad_cli =
        test::run_gua({"report", "--db", db(), "--config", config_path(), "--since", "5q"});
    const auto bad = http_get(port, "/report?since=5q");
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ("gua: --" + bad.body, bad_cli.err);
    EXPECT_EQ(http_get(port, "/report.json?gpu=9").status, 400);
    EXPECT_EQ(http_get(port, "/report?colour=red").status, 400);
    EXPECT_EQ(http_get(port, "/metrics").status, 200);

    daemon->signal(SIGTERM);
    EXPECT_EQ(daemon->wait_exit(30s), 0) << daemon->err();
}

} // namespace
} // namespace gua::e2e

// SPDX-License-Identifier: Apache-2.0
// The daemon's report pages computed in process: the JSON page equals `gua report --format json`
// for the same window, the command line's validation (one-line 400s with its messages), the time
// limit and cancellation (503), and a database that cannot be read (500).
#include "daemon/report_pages.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace gua::daemon {
namespace {

using nlohmann::json;

constexpr TimeUs k_now = 1'767'610'800 * k_us_per_second; // 2026-01-05T11:00:00Z

class ReportPages : public ::testing::Test {
  protected:
    void SetUp() override {
        const test::RunResult demo =
            test::run_gua({"demo", "--db", m_db, "--start", "2026-01-05T10:00:00Z", "--quiet",
                           "--format", "json"});
        ASSERT_EQ(demo.exit_code, 0) << demo.err;
        std::ofstream(m_config).close();
        m_options.db_path = m_db;
        m_options.now = [] { return k_now; };
    }

    exporter::Page page(std::string_view path, const exporter::Query& query) {
        return report_page(m_options, path, query, m_cancel);
    }

    /// The one-line error `gua report` prints for `args`, as the page says it: without "gua: "
    /// and the flag's dashes.
    std::string cli_error(std::vector<std::string> args) {
        args.insert(args.begin(), {"report", "--db", m_db, "--config", m_config});
        const test::RunResult r = test::run_gua(args);
        EXPECT_NE(r.exit_code, 0);
        EXPECT_EQ(r.err.rfind("gua: --", 0), 0u) << r.err;
        return r.err.substr(7);
    }

    test::TempDir m_dir;
    std::string m_db = m_dir.file("demo.db");
    std::string m_config = m_dir.file("gua.toml"); // empty: the defaults, as the daemon's
    ReportPagesOptions m_options;
    std::atomic<bool> m_cancel{false};
};

TEST_F(ReportPages, TheJsonPageIsTheJsonReport) {
    const exporter::Page p =
        page("/report.json", {{"from", "2026-01-05T09:00:00Z"}, {"to", "2026-01-05T11:00:00Z"}});
    ASSERT_EQ(p.status, 200u) << p.body;
    EXPECT_EQ(p.content_type, "application/json; charset=utf-8");
    const test::RunResult cli =
        test::run_gua({"report", "--db", m_db, "--from", "2026-01-05T09:00:00Z", "--to",
                       "2026-01-05T11:00:00Z", "--format", "json", "--config", m_config});
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    EXPECT_EQ(json::parse(p.body), json::parse(cli.out));
    EXPECT_GT(json::parse(p.body)["samples"].get<int>(), 0);
}

TEST_F(ReportPages, RootIsTheLastSevenDaysInHtml) {
    const exporter::Page p = page("/", {});
    ASSERT_EQ(p.status, 200u) << p.body.substr(0, 200);
    EXPECT_EQ(p.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(p.body.rfind("<!DOCTYPE html>", 0), 0u);
    const std::size_t header = p.body.find("<header>");
    EXPECT_NE(p.body.find("Window <time>2025-12-29T11:00:00Z</time> → "
                          "<time>2026-01-05T11:00:00Z</time> (1w)"),
              std::string::npos)
        << p.body.substr(header, 400);
    const exporter::Page filtered = page("/report", {{"since", "1d"}, {"gpu", "0"}});
    ASSERT_EQ(filtered.status, 200u) << filtered.body.substr(0, 200);
    EXPECT_NE(filtered.body.find("<span class=\"badge\">gpu=0</span>"), std::string::npos);
}

TEST_F(ReportPages, BadParametersAre400WithTheCommandLinesMessage) {
    const auto bad = [&](const exporter::Query& q) {
        const exporter::Page p = page("/report", q);
        EXPECT_EQ(p.status, 400u) << p.body;
        EXPECT_EQ(p.body.find('\n'), p.body.size() - 1) << "one line: " << p.body;
        return p.body;
    };
    EXPECT_EQ(bad({{"since", "7x"}}), cli_error({"--since", "7x"}));
    EXPECT_EQ(bad({{"from", "yesterday"}}), cli_error({"--from", "yesterday"}));
    EXPECT_EQ(bad({{"gpu", "7"}}), cli_error({"--since", "30d", "--gpu", "7"}));
    EXPECT_EQ(bad({{"user", "nobody-here"}}),
              cli_error({"--since", "30d", "--user", "nobody-here"}));
    EXPECT_EQ(bad({{"since", "1d"}, {"until", "2d"}}),
              "empty window: 2026-01-04T11:00:00Z is not before 2026-01-03T11:00:00Z\n");
    EXPECT_EQ(bad({{"bogus", "1"}}),
              "unknown parameter 'bogus' (known: since, until, from, to, gpu, user, tz)\n");
    EXPECT_EQ(bad({{"since", "1d"}, {"since", "2d"}}), "since: given twice\n");
    EXPECT_EQ(bad({{"gpu", ""}}), "gpu: must not be empty\n");
    EXPECT_EQ(bad({{"from", "2026-01-05"}, {"since", "1d"}}), "from excludes since\n");
    EXPECT_EQ(bad({{"tz", "Mars/Olympus"}}).rfind("tz: ", 0), 0u);
    // A value with a line break stays on one line.
    EXPECT_EQ(bad({{"x\ny", "1"}}).rfind("unknown parameter 'x\\x0ay'", 0), 0u);
}

TEST_F(ReportPages, TooSlowOrCancelledIs503AndAMissingDatabase500) {
    m_options.timeout = std::chrono::milliseconds(0);
    const exporter::Page slow = page("/report", {{"since", "30d"}});
    EXPECT_EQ(slow.status, 503u) << slow.body.substr(0, 200);
    EXPECT_EQ(slow.body.substr(0, 200), "the report took longer than 0ms; try a shorter window\n");

    m_options.timeout = std::chrono::milliseconds(30000);
    m_cancel = true;
    EXPECT_EQ(page("/report", {}).status, 503u);
    m_cancel = false;

    m_options.db_path = m_dir.file("missing.db");
    const exporter::Page missing = page("/report.json", {});
    EXPECT_EQ(missing.status, 500u);
    EXPECT_NE(missing.body.find("missing.db"), std::string::npos) << missing.body;
}

} // namespace
} // namespace gua::daemon

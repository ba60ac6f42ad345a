// SPDX-License-Identifier: Apache-2.0
// End to end: the real gua binary — `gua demo` on the classic workload, `gua report` on the
// database it wrote (same numbers, filters, time zones), and one-line errors for bad input.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace gua::e2e {
namespace demo_test { // named after the file: unique in a unity batch

using nlohmann::json;

const std::string k_start = "2026-01-05T10:00:00Z";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

/// The first line that starts with `prefix` (empty when none).
std::string line_starting(const std::string& text, const std::string& prefix) {
    for (const std::string& line : lines_of(text)) {
        if (line.starts_with(prefix)) {
            return line;
        }
    }
    return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// The classic demo database, recorded once for the whole suite.
class DemoE2E : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = std::make_unique<test::TempDir>();
        s_db = s_dir->file("d.db");
        s_demo_text = test::run_gua({"demo", "--db", s_db, "--start", k_start});
    }
    static void TearDownTestSuite() { s_dir.reset(); }

    static test::RunResult report(std::vector<std::string> extra) {
        std::vector<std::string> args{"report",     "--db", s_db,        "--from",
                                      "2026-01-05", "--to", "2026-01-06"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    static json report_json(std::vector<std::string> extra) {
        extra.insert(extra.end(), {"--format", "json"});
        const test::RunResult r = report(extra);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return json::parse(r.out);
    }

    /// Runs `gua report` with `args` expecting a one-line error on stderr.
    static test::RunResult expect_error(const std::vector<std::string>& args) {
        const test::RunResult r = test::run_gua(args);
        EXPECT_NE(r.exit_code, 0);
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_TRUE(r.err.starts_with("gua: ")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        return r;
    }

    static inline std::unique_ptr<test::TempDir> s_dir;
    static inline std::string s_db;
    static inline test::RunResult s_demo_text;
};

void expect_classic_headline(const json& j) {
    EXPECT_EQ(j["samples"], 90);
    EXPECT_NEAR(j["headline"]["active"].get<double>(), 12.0 / 90, 1e-9);
    EXPECT_NEAR(j["headline"]["idle_held"].get<double>(), 42.0 / 90, 1e-9);
    EXPECT_NEAR(j["headline"]["truly_idle"].get<double>(), 36.0 / 90, 1e-9);
    EXPECT_NEAR(j["headline"]["active_gpu_hours"].get<double>(), 12.0 / 3600, 1e-12);
    EXPECT_NEAR(j["headline"]["idle_held_gpu_hours"].get<double>(), 42.0 / 3600, 1e-12);
    EXPECT_NEAR(j["headline"]["truly_idle_gpu_hours"].get<double>(), 36.0 / 3600, 1e-12);
    EXPECT_NEAR(j["waste"]["idle_held_equiv_gpus"].get<double>(), 1.4, 1e-9);
    EXPECT_NEAR(j["waste"]["truly_idle_equiv_gpus"].get<double>(), 1.2, 1e-9);
    EXPECT_EQ(j["waste"]["gpus_in_window"], 3);
    EXPECT_EQ(j["policy_verdict"]["allocation_policy_problem"], true);
}

TEST_F(DemoE2E, DemoPrintsTheClassicHeadline) {
    const test::RunResult& r = s_demo_text;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(line_starting(r.out, "  active "), "13.3%")) << r.out;
    EXPECT_TRUE(contains(line_starting(r.out, "  idle-held "), "46.7%")) << r.out;
    EXPECT_TRUE(contains(line_starting(r.out, "  truly-idle "), "40.0%")) << r.out;
    EXPECT_TRUE(contains(r.out, "  (90 samples; 100.0% from driver sample buffers)\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "~1.40 GPUs equivalently unused")) << r.out;
    // Tick lines go to stderr, the report to stdout.
    EXPECT_TRUE(contains(r.err, "Tick 0  2026-01-05T10:00:00Z")) << r.err;
    EXPECT_FALSE(contains(r.out, "Tick 0")) << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST_F(DemoE2E, DemoJsonHeadlineWasteAndIdentities) {
    const test::TempDir dir;
    const test::RunResult r = test::run_gua(
        {"demo", "--db", dir.file("j.db"), "--start", k_start, "--quiet", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const json j = json::parse(r.out);
    expect_classic_headline(j);
    EXPECT_EQ(j["window"]["from"], k_start);
    EXPECT_EQ(j["window"]["to"], "2026-01-05T10:00:30Z");

    const json& top = j["identities"]["top"];
    ASSERT_EQ(top.size(), 3U);
    EXPECT_EQ(top[0]["name"], "bob");
    EXPECT_EQ(top[1]["name"], "alice");
    EXPECT_EQ(top[2]["name"], "unknown");
    EXPECT_EQ(j["identities"]["total"], 3);
    double sum = 0;
    for (const json& row : top) {
        sum += row["gpu_hours"].get<double>();
    }
    const double card_hours = j["headline"]["active_gpu_hours"].get<double>() +
                              j["headline"]["idle_held_gpu_hours"].get<double>();
    EXPECT_NEAR(sum, card_hours, 1e-9);
    // bob and the unknown process split GPU-1's 30 idle-held seconds 8000 : 200.
    EXPECT_NEAR(top[0]["gpu_hours"].get<double>(), 30.0 * 8000 / 8200 / 3600,
                1e-8); // whole µs per card-tick
    EXPECT_NEAR(top[2]["gpu_hours"].get<double>(), 30.0 * 200 / 8200 / 3600,
                1e-8); // whole µs per card-tick
    EXPECT_NEAR(top[1]["active_gpu_hours"].get<double>(), 12.0 / 3600, 1e-9);
    EXPECT_NEAR(top[1]["idle_held_gpu_hours"].get<double>(), 12.0 / 3600, 1e-9);
    EXPECT_NEAR(top[1]["idle_held_gib_hours"].get<double>(), 70000.0 / 1024 * 12 / 3600, 1e-9);
    EXPECT_EQ(top[1]["samples"], 24);
}

TEST_F(DemoE2E, ReportOnTheDemoDatabaseGivesTheSameNumbers) {
    const test::RunResult text = report({});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(contains(line_starting(text.out, "  active "), "13.3%")) << text.out;
    EXPECT_TRUE(contains(line_starting(text.out, "  idle-held "), "46.7%")) << text.out;
    EXPECT_TRUE(contains(line_starting(text.out, "  truly-idle "), "40.0%")) << text.out;
    EXPECT_TRUE(contains(text.out, "  (90 samples; 100.0% from driver sample buffers)\n"));
    // Everything below the headline matches the demo's own report; only the window differs.
    const std::string from_demo = s_demo_text.out.substr(s_demo_text.out.find("§1"));
    const std::string from_report = text.out.substr(text.out.find("§1"));
    EXPECT_EQ(from_report.substr(0, from_report.find("Data coverage")),
              from_demo.substr(0, from_demo.find("Data coverage")));

    const json j = report_json({});
    expect_classic_headline(j);
    EXPECT_EQ(j["window"]["from"], "2026-01-05T00:00:00Z");
    EXPECT_EQ(j["window"]["label"], "1d");
    EXPECT_EQ(j["identities"]["top"][0]["name"], "bob");
}

TEST_F(DemoE2E, GpuFilter) {
    const json j = report_json({"--gpu", "1"});
    EXPECT_EQ(j["samples"], 30);
    EXPECT_DOUBLE_EQ(j["headline"]["idle_held"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(j["headline"]["active"].get<double>(), 0.0);
    EXPECT_EQ(j["waste"]["gpus_in_window"], 1);
    EXPECT_NEAR(j["waste"]["idle_held_equiv_gpus"].get<double>(), 1.0, 1e-12);
    ASSERT_EQ(j["gpus"].size(), 1U);
    EXPECT_EQ(j["gpus"][0]["index"], 1);
    EXPECT_EQ(j["window"]["filters"], json::array({"gpu=1"}));

    const test::RunResult text = report({"--gpu", "1"});
    EXPECT_TRUE(contains(line_starting(text.out, "  idle-held "), "100.0%")) << text.out;
    EXPECT_TRUE(contains(text.out, "  (30 samples; 100.0% from driver sample buffers)\n"))
        << text.out;
    // A uuid prefix selects the same card.
    EXPECT_EQ(report_json({"--gpu", "GPU-1a7c"})["headline"], j["headline"]);
}

TEST_F(DemoE2E, UserFilter) {
    const json j = report_json({"--user", "alice"});
    // alice's 24 card-ticks on GPU-0: 12 training, 12 holding idle.
    EXPECT_EQ(j["samples"], 24);
    EXPECT_NEAR(j["headline"]["active"].get<double>(), 0.5, 1e-12);
    EXPECT_NEAR(j["headline"]["idle_held"].get<double>(), 0.5, 1e-12);
    ASSERT_EQ(j["identities"]["top"].size(), 1U);
    EXPECT_EQ(j["identities"]["top"][0]["name"], "alice");
    ASSERT_EQ(j["gpus"].size(), 1U);
    EXPECT_EQ(j["gpus"][0]["index"], 0);
    EXPECT_EQ(j["window"]["filters"], json::array({"user=alice"}));
}

TEST_F(DemoE2E, TimeZoneMovesTheHeatmapCell) {
    const json utc = report_json({});
    ASSERT_EQ(utc["heatmap"]["cells"].size(), 1U);
    EXPECT_EQ(utc["heatmap"]["cells"][0]["weekday"], 1);
    EXPECT_EQ(utc["heatmap"]["cells"][0]["hour"], 10);
    const json ist = report_json({"--tz", "Asia/Kolkata"});
    EXPECT_EQ(ist["heatmap"]["time_zone"], "Asia/Kolkata");
    ASSERT_EQ(ist["heatmap"]["cells"].size(), 1U);
    EXPECT_EQ(ist["heatmap"]["cells"][0]["weekday"], 1);
    EXPECT_EQ(ist["heatmap"]["cells"][0]["hour"], 15); // 10:00Z + 5:30
    EXPECT_EQ(ist["headline"], utc["headline"]);
    // [report] time_zone is the default; --tz still wins.
    const test::TempDir dir;
    const std::string config = dir.file("gua.toml");
    std::ofstream(config) << "[report]\ntime_zone = \"Asia/Kolkata\"\n";
    const json configured = report_json({"--config", config});
    EXPECT_EQ(configured["heatmap"]["time_zone"], "Asia/Kolkata");
    EXPECT_EQ(configured["heatmap"]["cells"][0]["hour"], 15);
    EXPECT_EQ(configured["recommendations"]["pools_time_zone"], "Asia/Kolkata");
    EXPECT_EQ(report_json({"--config", config, "--tz", "UTC"})["heatmap"]["time_zone"], "UTC");

    const test::RunResult text = report({"--tz", "Asia/Kolkata"});
    const std::string mon = line_starting(text.out, "  Mon");
    // "  Mon  " then " g" per hour: hour h's glyph is at column 8 + 2h.
    ASSERT_GE(mon.size(), 8U + 2 * 15) << text.out;
    EXPECT_EQ(mon[8 + 2 * 15], '.') << mon;
    EXPECT_EQ(mon[8 + 2 * 10], ' ') << mon;
}

TEST_F(DemoE2E, BadDurationIsAUsageError) {
    const test::RunResult r = expect_error({"report", "--db", s_db, "--since", "30"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "invalid duration")) << r.err;
    const test::RunResult year = expect_error({"report", "--db", s_db, "--since", "1y"});
    EXPECT_EQ(year.exit_code, 2);
    EXPECT_TRUE(contains(year.err, "invalid duration '1y'")) << year.err;
}

TEST_F(DemoE2E, BadTimeIsAUsageError) {
    const test::RunResult r = expect_error({"report", "--db", s_db, "--from", "garbage"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--from")) << r.err;
    EXPECT_TRUE(contains(r.err, "garbage")) << r.err;
}

TEST_F(DemoE2E, MissingDatabaseIsNamedAndNotCreated) {
    const test::RunResult r = expect_error({"report", "--db", "/nonexistent/x.db"});
    EXPECT_TRUE(contains(r.err, "/nonexistent/x.db")) << r.err;
    EXPECT_FALSE(std::filesystem::exists("/nonexistent/x.db"));
    const test::TempDir dir;
    const std::string missing = dir.file("sub/x.db");
    const test::RunResult local = expect_error({"report", "--db", missing});
    EXPECT_TRUE(contains(local.err, missing)) << local.err;
    EXPECT_FALSE(std::filesystem::exists(missing));
    EXPECT_FALSE(std::filesystem::exists(dir.file("sub")));
}

TEST_F(DemoE2E, UnknownTimeZoneIsAUsageError) {
    const test::RunResult r = expect_error({"report", "--db", s_db, "--tz", "Mars/Base"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "Mars/Base")) << r.err;
}

TEST_F(DemoE2E, UnknownGpuIsAUsageError) {
    const test::RunResult r = expect_error({"report", "--db", s_db, "--gpu", "7"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--gpu 7")) << r.err;
}

TEST_F(DemoE2E, CommandLineParseErrorsAreUsageErrors) {
    // ExitCode::usage (2) is "bad command line or configuration", whoever detects it: a value
    // outside a flag's set or range, or an unknown flag, is as much a usage error as `--since 30`.
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--format", "xml"}, std::vector<std::string>{"--width", "0"},
          std::vector<std::string>{"--bogus"}}) {
        std::vector<std::string> args{"report", "--db", s_db};
        args.insert(args.end(), bad.begin(), bad.end());
        const test::RunResult r = test::run_gua(args);
        EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.err;
        EXPECT_TRUE(contains(r.err, bad[0])) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST_F(DemoE2E, IntervalOverrideWarns) {
    const test::RunResult r = report({"--interval", "5s"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "note: --interval 5s overrides the recorded interval (1s)"))
        << r.out;
    // Shares are unchanged, hours scale by 5.
    EXPECT_TRUE(contains(line_starting(r.out, "  active "), "13.3%")) << r.out;
    const json j = report_json({"--interval", "5s"});
    EXPECT_NEAR(j["headline"]["idle_held_gpu_hours"].get<double>(), 5 * 42.0 / 3600, 1e-12);
    ASSERT_EQ(j["notes"].size(), 1U);
    // The recorded interval itself is not worth a note.
    EXPECT_TRUE(report_json({"--interval", "1s"})["notes"].empty());
}

TEST_F(DemoE2E, EmptyWindowPrintsEverySection) {
    const test::RunResult r =
        test::run_gua({"report", "--db", s_db, "--from", "2020-01-01", "--to", "2020-01-02"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::pair<std::string, std::string>> sections{
        {"§1 Headline", "  (no samples in window)"},
        {"§2 Waste", "  (no samples in window)"},
        {"§3 Per-GPU", "  (no GPU cards in window)"},
        {"§4 Top identities", "  (no processes in window)"},
        {"§5 Time-of-day heatmap", "  (no samples in window)"},
        {"§6 Efficiency", "  (no utilization measured in window)"},
        {"Verdict", "  (no samples in window)"},
        {"Data coverage", "  (no samples in window)"}};
    const std::vector<std::string> lines = lines_of(r.out);
    for (const auto& [header, empty_line] : sections) {
        const auto it =
            std::find_if(lines.begin(), lines.end(),
                         [&h = header](const std::string& l) { return l.starts_with(h); });
        ASSERT_NE(it, lines.end()) << header << " missing:\n" << r.out;
        ASSERT_NE(it + 1, lines.end());
        EXPECT_EQ(*(it + 1), empty_line) << header;
    }
    const test::RunResult as_json = test::run_gua(
        {"report", "--db", s_db, "--from", "2020-01-01", "--to", "2020-01-02", "--format", "json"});
    ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
    const json j = json::parse(as_json.out);
    EXPECT_EQ(j["samples"], 0);
    EXPECT_TRUE(j["coverage"]["first_sample"].is_null());
}

TEST_F(DemoE2E, NoColorAndNonTerminalOutputHaveNoEscapes) {
    const test::RunResult plain = report({});
    EXPECT_EQ(plain.out.find('\x1b'), std::string::npos);
    const test::RunResult no_env = test::run_gua(
        {"report", "--db", s_db, "--from", "2026-01-05", "--to", "2026-01-06"}, {{"NO_COLOR", ""}});
    ASSERT_EQ(no_env.exit_code, 0);
    EXPECT_EQ(no_env.out.find('\x1b'), std::string::npos) << "colour on a non-terminal";

    const std::vector<std::string> args{"report",     "--db", s_db,        "--from",
                                        "2026-01-05", "--to", "2026-01-06"};
    const test::RunResult tty = test::run_in_pty(GUA_BINARY, args, {{"NO_COLOR", ""}});
    ASSERT_EQ(tty.exit_code, 0) << tty.out;
    EXPECT_NE(tty.out.find("\x1b[32m"), std::string::npos) << "no colour on a terminal";
    const test::RunResult tty_no_color = test::run_in_pty(GUA_BINARY, args, {{"NO_COLOR", "1"}});
    ASSERT_EQ(tty_no_color.exit_code, 0);
    EXPECT_TRUE(contains(tty_no_color.out, "(90 samples; 100.0% from driver sample buffers)"));
    EXPECT_EQ(tty_no_color.out.find('\x1b'), std::string::npos) << "colour despite NO_COLOR";
}

} // namespace demo_test
} // namespace gua::e2e

// SPDX-License-Identifier: Apache-2.0
// End to end: `gua demo --workload staggered` records through the real sampler and writer, and
// `gua plan` on that database gives the workload's known answer in JSON, text and HTML; bad flags
// are one line on stderr and exit 2.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace gua::e2e {
namespace plan_e2e_test { // named after the file: unique in a unity batch

using nlohmann::json;

class PlanE2E : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = std::make_unique<test::TempDir>();
        s_db = s_dir->file("p.db");
        const test::RunResult r = test::run_gua({"demo", "--workload", "staggered", "--db", s_db,
                                                 "--start", "2026-01-05T00:00:00Z", "--quiet"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() { s_dir.reset(); }

    static test::RunResult plan(std::vector<std::string> extra) {
        std::vector<std::string> args{
            "plan", "--db", s_db, "--from", "2026-01-05", "--to", "2026-01-05T16:00:00Z"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    static std::unique_ptr<test::TempDir> s_dir;
    static std::string s_db;
};

std::unique_ptr<test::TempDir> PlanE2E::s_dir;
std::string PlanE2E::s_db;

const json& scenario(const json& doc, const json& timeout, const std::string& share) {
    for (const json& s : doc["scenarios"]) {
        if (s["idle_timeout"] == timeout && s["share"] == share) {
            return s;
        }
    }
    throw std::runtime_error("no scenario");
}

// Eight notebooks opened an hour apart (one-minute ticks), each active 1 h then idle 7 h: cut at
// 30 min each holds 1.5 h, so at most two hold at once; without a policy all eight overlap at 7 h.
TEST_F(PlanE2E, StaggeredNotebooksKnownAnswer) {
    const test::RunResult r = plan({"--format", "json", "--idle-timeout", "30m", "--idle-timeout",
                                    "none", "--share", "exclusive"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["scenarios"].size(), 2U);
    const json& cut = scenario(doc, 1800.0, "exclusive");
    EXPECT_EQ(cut["gpus_needed"], 2);
    EXPECT_EQ(cut["peak_gpus"], 2);
    EXPECT_EQ(cut["band"]["drop"]["gpus_needed"], 2);
    EXPECT_EQ(cut["band"]["relaunch"]["gpus_needed"], 2);
    EXPECT_EQ(cut["cuts"]["killed"], 8);
    EXPECT_EQ(cut["savings"]["gpus_released"], 6);
    const json& none = scenario(doc, nullptr, "exclusive");
    EXPECT_EQ(none["gpus_needed"], 8);
    EXPECT_EQ(none["p95_gpus"], 8);
    EXPECT_EQ(none["wait"]["interactive"]["p95_s"], 0.0);
    EXPECT_EQ(doc["confidence"]["units"], 8);
    EXPECT_EQ(doc["confidence"]["interactive_units"], 8);
    EXPECT_EQ(doc["confidence"]["coverage"], 1.0);
}

// The interface: every scenario of the default sweep carries the documented keys.
TEST_F(PlanE2E, SweepJsonHasEveryScenarioAndKey) {
    const test::RunResult r = plan({"--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["scenarios"].size(), 7U * 3U);
    for (const json& s : doc["scenarios"]) {
        for (const char* key : {"idle_timeout", "share", "gpus_needed", "peak_gpus", "p99_gpus",
                                "p95_gpus", "band", "wait", "savings"}) {
            EXPECT_TRUE(s.contains(key)) << key;
        }
        EXPECT_TRUE(s["band"].contains("drop"));
        EXPECT_TRUE(s["band"].contains("relaunch"));
        EXPECT_LE(s["band"]["drop"]["gpus_needed"], s["band"]["relaunch"]["gpus_needed"]);
    }
    EXPECT_TRUE(doc["scenarios"][0]["idle_timeout"] == 900.0);
    EXPECT_TRUE(doc["scenarios"][20]["idle_timeout"].is_null());
    EXPECT_TRUE(doc.contains("confidence"));
}

// --gpus 1: all eight notebooks (no policy) queue for one card; each waits for the one before
// it to end. Notebook i opens at i h and holds 8 h, so notebook 7 starts at 7 × 8 h and waits
// 49 h; the nearest-rank p95 of the eight waits is that largest one.
TEST_F(PlanE2E, GivenGpuCountShowsItsWaits) {
    const test::RunResult r =
        plan({"--format", "json", "--idle-timeout", "none", "--share", "exclusive", "--gpus", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json s = json::parse(r.out)["scenarios"][0];
    EXPECT_EQ(s["wait"]["at_gpus"], 1);
    double longest = 0;
    for (int i = 0; i < 8; ++i) {
        longest = std::max(longest, (i * 8.0 - i) * 3600);
    }
    EXPECT_EQ(s["wait"]["interactive"]["p95_s"], longest);
    EXPECT_EQ(s["wait"]["interactive"]["max_s"], longest);
    EXPECT_EQ(s["gpus_needed"], 8);
}

TEST_F(PlanE2E, SweepTextAndHtml) {
    const test::RunResult text = plan({});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("idle timeout"), std::string::npos);
    EXPECT_NE(text.out.find("T = 30m, exclusive: 2 GPUs needed"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("raw ticks are kept"), std::string::npos);
    const std::string page = s_dir->file("plan.html");
    const test::RunResult html = plan({"--format", "html", "--output", page});
    ASSERT_EQ(html.exit_code, 0) << html.err;
    const std::string body = test::read_text(page);
    EXPECT_NE(body.find("<svg"), std::string::npos);
    EXPECT_NE(body.find("</html>"), std::string::npos);
}

TEST_F(PlanE2E, BadFlagsAreUsageErrors) {
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--share", "vgpu"},
                                                {"--idle-timeout", "soon"},
                                                {"--gpus", "0"},
                                                {"--format", "csv"}}) {
        const test::RunResult r = plan(bad);
        EXPECT_EQ(r.exit_code, 2) << bad[0];
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
}

// A window without raw card-ticks is an error, never "0 GPUs needed".
TEST_F(PlanE2E, WindowWithoutRawTicksIsAnError) {
    const test::RunResult r =
        test::run_gua({"plan", "--db", s_db, "--from", "2025-01-01", "--to", "2025-01-02"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("no raw card-ticks"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

} // namespace plan_e2e_test
} // namespace gua::e2e

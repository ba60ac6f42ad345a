// SPDX-License-Identifier: Apache-2.0
// End to end: `gua report --plan` on `gua demo --workload staggered` gives §8's idle-culling and
// gpu-sharing remedies the plan's known answer (JSON, text, HTML), at the policy's timeout when
// gua.toml has one; without --plan the report is unchanged; bad combinations exit 2.
#include "support/one_line.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace gua::e2e {
namespace report_plan_e2e_test { // named after the file: unique in a unity batch

using nlohmann::json;
using test::one_line;

class ReportPlanE2E : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = std::make_unique<test::TempDir>();
        s_db = s_dir->file("p.db");
        const test::RunResult r = test::run_gua({"demo", "--workload", "staggered", "--db", s_db,
                                                 "--start", "2026-01-05T00:00:00Z", "--quiet"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() { s_dir.reset(); }

    static test::RunResult report(std::vector<std::string> extra) {
        std::vector<std::string> args{
            "report",  "--db", s_db, "--from", "2026-01-05", "--to", "2026-01-05T16:00:00Z",
            "--price", "2.00"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    static std::unique_ptr<test::TempDir> s_dir;
    static std::string s_db;
};

std::unique_ptr<test::TempDir> ReportPlanE2E::s_dir;
std::string ReportPlanE2E::s_db;

const json& item(const json& doc, const std::string& id) {
    for (const json& i : doc["recommendations"]["items"]) {
        if (i["id"] == id) {
            return i;
        }
    }
    throw std::runtime_error("no item " + id);
}

const json& scenario(const json& plan, const json& timeout, const std::string& share) {
    for (const json& s : plan["scenarios"]) {
        if (s["idle_timeout_s"] == timeout && s["share"] == share) {
            return s;
        }
    }
    throw std::runtime_error("no scenario");
}

/// Cards needed when notebook i (of 8, opened i hours in) holds [i h, i h + hold_h h).
int overlap(int hold_h) {
    int most = 0;
    for (int i = 0; i < 8; ++i) {
        int n = 0;
        for (int j = 0; j < 8; ++j) {
            n += (j <= i && i < j + hold_h) ? 1 : 0;
        }
        most = std::max(most, n);
    }
    return most;
}

// Without a policy in gua.toml the culling remedy is replayed at 1 h: each notebook holds its
// active hour and one idle hour, two overlap, six of the eight cards go at 720 h × $2.00.
TEST_F(ReportPlanE2E, JsonRemediesCarryTheKnownAnswer) {
    const test::RunResult r = report({"--plan", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    const json& culling = item(doc, "idle-culling")["plan"];
    EXPECT_EQ(culling["computed"], true);
    EXPECT_EQ(culling["idle_timeout_s"], 3600.0);
    EXPECT_NE(culling["idle_timeout_basis"].get<std::string>().find("by default"),
              std::string::npos);
    const int needed = overlap(2);
    const json& cut = scenario(culling, 3600.0, "exclusive");
    EXPECT_EQ(cut["gpus_needed"], needed);
    EXPECT_EQ(cut["gpus_recorded"], 8);
    EXPECT_EQ(cut["gpus_released"], 8 - needed);
    EXPECT_EQ(cut["monthly_cents"], (8 - needed) * 720 * 200);
    EXPECT_EQ(cut["sessions_cut"], 8);
    EXPECT_EQ(scenario(culling, nullptr, "exclusive")["gpus_needed"], overlap(8));
    EXPECT_EQ(culling["confidence"]["coverage"], 1.0);
    EXPECT_EQ(culling["confidence"]["units"], 8);
    const json& sharing = item(doc, "gpu-sharing")["plan"];
    EXPECT_EQ(scenario(sharing, nullptr, "mig")["gpus_needed"], (overlap(8) + 6) / 7); // 1g.10gb
    EXPECT_EQ(scenario(sharing, nullptr, "mps")["gpus_needed"], 1); // 8 × 4000 MiB on one card
    EXPECT_TRUE(sharing.contains("confidence"));
}

// Without --plan nothing changes; with it only `plan` objects are added.
TEST_F(ReportPlanE2E, WithoutPlanTheReportIsUnchanged) {
    const test::RunResult plain = report({"--format", "json"});
    const test::RunResult linked = report({"--plan", "--format", "json"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_EQ(linked.exit_code, 0) << linked.err;
    EXPECT_EQ(plain.out.find("\"plan\""), std::string::npos);
    json stripped = json::parse(linked.out);
    for (json& i : stripped["recommendations"]["items"]) {
        i.erase("plan");
    }
    json base = json::parse(plain.out);
    stripped.erase("generated_at");
    base.erase("generated_at");
    EXPECT_EQ(stripped, base);
}

// A terminating policy rule of 30 min sets the timeout: 1.5 h holds, still two at once.
TEST_F(ReportPlanE2E, PolicyTimeoutTextAndHtml) {
    const std::string cfg = s_dir->file("gua.toml");
    std::ofstream(cfg) << "[policy]\nenabled = true\n\n[[policy.rule]]\nname = \"cull-30m\"\n"
                          "after = \"30m\"\naction = \"terminate\"\n";
    const test::RunResult text = report({"--plan", "--config", cfg});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const std::string flat = one_line(text.out);
    EXPECT_NE(flat.find("plan: the same work fits on 2 GPUs at T = 30m (8 recorded); T is 30m, "
                        "the after of [[policy.rule]] \"cull-30m\""),
              std::string::npos)
        << text.out;
    EXPECT_NE(flat.find("confidence: raw ticks are kept"), std::string::npos);
    const std::string page = s_dir->file("r.html");
    const test::RunResult html =
        report({"--plan", "--config", cfg, "--format", "html", "--output", page});
    ASSERT_EQ(html.exit_code, 0) << html.err;
    const std::string body = test::read_text(page);
    EXPECT_NE(body.find(".plan.scenarios.1.gpus_needed"), std::string::npos);
    EXPECT_NE(body.find("Confidence: raw card-ticks cover"), std::string::npos);
}

TEST_F(ReportPlanE2E, BadCombinationsAreUsageErrors) {
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--plan", "--format", "csv", "--table", "gpus"},
          {"--plan", "--interval", "1m"}}) {
        const test::RunResult r = report(bad);
        EXPECT_EQ(r.exit_code, 2) << bad[1];
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
    const test::RunResult job = test::run_gua({"report", "--db", s_db, "--job", "1", "--plan"});
    EXPECT_EQ(job.exit_code, 2) << job.err;
}

} // namespace report_plan_e2e_test
} // namespace gua::e2e

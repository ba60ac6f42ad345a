// SPDX-License-Identifier: Apache-2.0
// The report's Policy section: per-rule counts, reclaimed GiB-hours, filters, and its presence in
// the built report only when the window has decisions.
#include "policy/support.hpp"
#include "report/build.hpp"
#include "report/policy_section.hpp"
#include "report/render.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <gtest/gtest.h>

namespace gua::report {
namespace {

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;

store::DecisionRow row(const std::string& rule, const std::string& action,
                       const std::string& verdict, const std::string& outcome,
                       const std::string& user = "alice", double reclaimed = 0) {
    store::DecisionRow r;
    r.time_us = k_t0;
    r.rule = rule;
    r.action = action;
    r.dry_run = verdict == "dry-run";
    r.verdict = verdict;
    r.outcome = outcome;
    r.user = user;
    r.gpu_uuid = user == "alice" ? "GPU-a" : "GPU-b";
    r.reclaimed_gib_hours = reclaimed;
    r.updated_us = k_t0;
    return r;
}

std::vector<store::DecisionRow> sample() {
    return {row("warn-2h", "notify", "act", "notified"),
            row("warn-2h", "notify", "act", "notify-failed", "bob"),
            row("warn-2h", "notify", "exempt", "exempt", "root"),
            row("reclaim-8h", "terminate", "act", "released", "alice", 64.0),
            row("reclaim-8h", "terminate", "act", "pid-reused", "bob"),
            row("reclaim-8h", "terminate", "dry-run", "dry-run", "bob")};
}

TEST(PolicySection, CountsPerRule) {
    const auto p = summarize_policy(sample(), std::nullopt, std::nullopt);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->decisions, 6U);
    EXPECT_EQ(p->notified, 1U);
    EXPECT_EQ(p->terminated, 1U);
    EXPECT_EQ(p->dry_runs, 1U);
    EXPECT_DOUBLE_EQ(p->reclaimed_gib_hours, 64.0);
    ASSERT_EQ(p->rules.size(), 2U);
    const PolicyRuleRow& reclaim = p->rules[0];
    EXPECT_EQ(reclaim.rule, "reclaim-8h");
    EXPECT_EQ(reclaim.acted, 1U);
    EXPECT_EQ(reclaim.failed, 1U);
    EXPECT_EQ(reclaim.dry_runs, 1U);
    EXPECT_EQ(reclaim.released, 1U);
    const PolicyRuleRow& warn = p->rules[1];
    EXPECT_EQ(warn.acted, 1U);
    EXPECT_EQ(warn.failed, 1U);
    EXPECT_EQ(warn.held_back, 1U);
    EXPECT_EQ(render_policy_text(*p),
              "Policy\n"
              "  rule               action     acted  dry-run  held back  failed  released  "
              "GiB-hours reclaimed\n"
              "  reclaim-8h         terminate      1        1          0       1         1  "
              "              64.00\n"
              "  warn-2h            notify         1        0          1       1         0  "
              "               0.00\n"
              "  6 decisions: 1 notification, 1 termination that released memory, 1 dry run; "
              "64.00 GiB-hours reclaimed (estimate: memory × idle time at release)\n");
    EXPECT_EQ(policy_json(*p)["rules"][0]["reclaimed_gib_hours"], 64.0);
}

TEST(PolicySection, FiltersAndAbsence) {
    EXPECT_EQ(summarize_policy(sample(), std::string("bob"), std::nullopt)->decisions, 3U);
    EXPECT_EQ(summarize_policy(sample(), std::nullopt, std::string("GPU-a"))->decisions, 2U);
    EXPECT_FALSE(summarize_policy(sample(), std::string("nobody"), std::nullopt));
    EXPECT_FALSE(summarize_policy({}, std::nullopt, std::nullopt));
}

TEST(PolicySection, InTheBuiltReportOnlyWithDecisions) {
    policy_test::TempDir dir;
    store::Database db(dir.file("gua.db"), store::OpenMode::create);
    store::migrate(db);
    store::Writer w(db, store::RunInfo{"h", "d", "nvml", k_us_per_second, 10.0, k_t0});
    w.write(policy_test::tick(0, k_t0, k_us_per_second,
                              {policy_test::card(0, 0, k_us_per_second, {})}));
    BuildOptions o;
    o.from = k_t0 - k_us_per_hour;
    o.to = k_t0 + k_us_per_hour;
    o.window_label = "2h";
    const TimeZone utc = TimeZone::load("UTC").value();
    ReportModel before = build_report(db, o, utc);
    EXPECT_FALSE(before.policy);
    EXPECT_EQ(render_text(before, {}).find("\nPolicy\n"), std::string::npos);
    EXPECT_FALSE(nlohmann::json::parse(render_json(before)).contains("policy"));
    store::DecisionLog log(db);
    for (const store::DecisionRow& r : sample()) {
        log.insert(r);
    }
    const ReportModel after = build_report(db, o, utc);
    ASSERT_TRUE(after.policy);
    const std::string text = render_text(after, {});
    EXPECT_LT(text.find("§6 Efficiency"), text.find("\nPolicy\n"));
    EXPECT_LT(text.find("\nPolicy\n"), text.find("\nVerdict\n"));
    EXPECT_EQ(nlohmann::json::parse(render_json(after))["policy"]["decisions"], 6);
}

} // namespace
} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// `gua report --plan`: §8's idle-culling and gpu-sharing remedies carry the plan's figures. On
// hand-built histories whose answers the tests derive from the schedule: eight staggered
// notebooks (cards needed at the culling timeout and with MIG/MPS, cards released and their
// price), a resumed session's band; the timeout taken from the policy; the text, JSON and HTML.
#include "cli/report_plan.hpp"
#include "plan/sweep.hpp"
#include "plan_ticks.hpp"
#include "report/render.hpp"
#include "store/temp_db.hpp"
#include "support/one_line.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace gua::plan_test {
namespace report_link_test { // named after the file: unique in a unity batch

using test::one_line;

constexpr DurationUs k_h = k_us_per_hour;
constexpr DurationUs k_m = k_us_per_minute;
constexpr std::int64_t k_price_cents = 200; // --price 2.00 per GPU-hour
constexpr std::int64_t k_hours_a_month = 24 * 30;

/// Feeds `cards` cards for [0, end) in steps of `tick`; `procs(gpu, t)` lists what each holds.
template <class Procs>
plan::Demand record(plan::DemandContext ctx, int cards, TimeUs end, DurationUs tick, Procs procs) {
    plan::DemandBuilder b(std::move(ctx));
    for (TimeUs t = 0; t < end; t += tick) {
        for (int g = 0; g < cards; ++g) {
            const std::vector<Proc> ps = procs(g, t);
            b.add(card_tick(static_cast<std::uint32_t>(g), t, tick, ps), ids_of(ps));
        }
    }
    return b.finish(0, end, 30 * k_us_per_day);
}

audit::Pricing two_dollars() {
    audit::Pricing p;
    p.override_micros_per_gpu_hour = k_price_cents * audit::k_micros_per_cent;
    return p;
}

/// Eight notebooks of 4000 MiB, one a card, opened an hour apart, each active its first hour
/// at 12 % SM and then held idle for seven (the `staggered` demo workload), at one-minute ticks.
plan::Demand staggered() {
    auto procs = [](int g, TimeUs t) {
        const TimeUs start = g * k_h;
        if (t < start || t >= start + 8 * k_h) {
            return std::vector<Proc>{};
        }
        return std::vector<Proc>{
            Proc{100 + g, static_cast<std::uint32_t>(g), 4000, 12, t < start + k_h}};
    };
    return record(context(8, 8, 8, 8), 8, 16 * k_h, k_m, procs);
}

/// The most sessions holding at once when session i holds [i h, i h + hold).
int overlap_of(DurationUs hold) {
    int most = 0;
    for (int i = 0; i < 8; ++i) { // the overlap is largest at some session's start
        int n = 0;
        for (int j = 0; j < 8; ++j) {
            n += (j * k_h <= i * k_h && i * k_h < j * k_h + hold) ? 1 : 0;
        }
        most = std::max(most, n);
    }
    return most;
}

const report::PlanLinkScenario& find(const report::PlanLink& link,
                                     std::optional<DurationUs> timeout, const std::string& share) {
    for (const report::PlanLinkScenario& s : link.scenarios) {
        if (s.idle_timeout == timeout && s.share == share) {
            return s;
        }
    }
    throw std::runtime_error("no such scenario");
}

report::PlanLink staggered_link(DurationUs timeout) {
    const plan::PlanResult r =
        plan::run_plan(staggered(), cli::link_options(timeout, two_dollars()));
    return cli::plan_link_of(r, cli::PlanTimeout{timeout, "the test's timeout"});
}

int ceil_div(int a, std::int64_t b) {
    return static_cast<int>((a + b - 1) / b);
}

// At T = 1 h a notebook holds its active hour plus one idle hour: two overlap, so two cards of
// the eight recorded, six released at 720 h × $2.00 a month each; without a timeout all eight.
// MIG: 4000 MiB + 10 % fits 1g.10gb (a card's memory / 8) and 12 % SM is under 1/7 of the card,
// seven to a card; MPS: (80 GiB − 5 %) / 4000 MiB = 19 to a card.
TEST(PlanReportLink, StaggeredCullingAndSharingFigures) {
    const DurationUs timeout = k_h;
    const report::PlanLink link = staggered_link(timeout);
    ASSERT_EQ(link.scenarios.size(), 6U);
    const int at_t = overlap_of(std::min(8 * k_h, k_h + timeout));
    const int none = overlap_of(8 * k_h);
    ASSERT_EQ(at_t, 2);
    ASSERT_EQ(none, 8);
    const report::PlanLinkScenario& cut = find(link, timeout, "exclusive");
    EXPECT_EQ(cut.gpus_recorded, 8);
    EXPECT_EQ(cut.gpus_needed, at_t);
    EXPECT_EQ(cut.gpus_needed_drop, at_t); // nobody comes back: the band is one number
    EXPECT_EQ(cut.peak_gpus, at_t);
    EXPECT_EQ(cut.gpus_released, 8 - at_t);
    EXPECT_EQ(cut.monthly_cents, (8 - at_t) * k_hours_a_month * k_price_cents);
    EXPECT_EQ(cut.sessions_cut, 8);
    EXPECT_EQ(cut.sessions_resumed, 0);
    EXPECT_TRUE(cut.objective_met);
    EXPECT_EQ(cut.interactive_p95_wait, 0);
    const report::PlanLinkScenario& held = find(link, std::nullopt, "exclusive");
    EXPECT_EQ(held.gpus_needed, none);
    EXPECT_EQ(held.gpus_released, 0);
    EXPECT_EQ(held.monthly_cents, 0);
    const std::int64_t mig_per_card = std::min(7 / 1, 8 / 1);
    const std::int64_t mps_per_card = (81920 - 81920 / 20) / 4000;
    ASSERT_EQ(mps_per_card, 19);
    EXPECT_EQ(find(link, std::nullopt, "mig").gpus_needed, ceil_div(none, mig_per_card));
    EXPECT_EQ(find(link, timeout, "mig").gpus_needed, ceil_div(at_t, mig_per_card));
    EXPECT_EQ(find(link, std::nullopt, "mps").gpus_needed, ceil_div(none, mps_per_card));
    EXPECT_EQ(find(link, timeout, "mps").gpus_needed, ceil_div(at_t, mps_per_card));
    EXPECT_EQ(find(link, std::nullopt, "mps").mps_slowdown, 1.0); // 8 × 12 % ≤ 100 %
    EXPECT_EQ(find(link, std::nullopt, "mig").monthly_cents,
              (8 - ceil_div(none, mig_per_card)) * k_hours_a_month * k_price_cents);
    // Confidence travels with the figures: the whole window is covered, retention is stated.
    EXPECT_EQ(link.confidence.recorded_us, 16 * k_h);
    EXPECT_EQ(link.confidence.window_us, 16 * k_h);
    EXPECT_EQ(link.confidence.raw_retention_us, 30 * k_us_per_day);
    EXPECT_EQ(link.confidence.units, 8);
    EXPECT_EQ(link.confidence.card_ticks, 8 * 16 * 60);
    ASSERT_FALSE(link.confidence.notes.empty());
    EXPECT_NE(link.confidence.notes.back().find("raw ticks are kept 30d"), std::string::npos)
        << link.confidence.notes.back();
}

// A notebook active [0, 1 h), idle until 3 h, active [3 h, 4 h); another starts at 3 h. Culled
// at 30 min the first is cut at 1.5 h; dropped it never returns (one card), relaunched it holds
// again from 3 h beside the second (two): the remedy carries both bounds.
TEST(PlanReportLink, ResumedSessionKeepsItsBand) {
    auto procs = [](int g, TimeUs t) {
        if (g == 0 && t < 4 * k_h) {
            return std::vector<Proc>{Proc{1, 0, 4000, 30, t < k_h || t >= 3 * k_h}};
        }
        if (g == 1 && t >= 3 * k_h && t < 4 * k_h) {
            return std::vector<Proc>{Proc{2, 1, 4000, 30, true}};
        }
        return std::vector<Proc>{};
    };
    const plan::Demand d = record(context(2, 8, 2, 2), 2, 6 * k_h, k_m, procs);
    const report::PlanLink link = cli::plan_link_of(
        plan::run_plan(d, cli::link_options(30 * k_m, two_dollars())), {30 * k_m, "policy"});
    const report::PlanLinkScenario& cut = find(link, 30 * k_m, "exclusive");
    EXPECT_EQ(cut.gpus_needed_drop, 1);
    EXPECT_EQ(cut.gpus_needed, 2);
    EXPECT_EQ(cut.gpus_released, 0);
    EXPECT_EQ(cut.gpus_released_drop, 1);
    EXPECT_EQ(cut.monthly_cents_drop, 1 * k_hours_a_month * k_price_cents);
    EXPECT_EQ(cut.sessions_cut, 1);
    EXPECT_EQ(cut.sessions_resumed, 1);
}

policy::Rule rule(const char* name, DurationUs after, policy::Action action) {
    policy::Rule r;
    r.name = name;
    r.after_us = after;
    r.action = action;
    return r;
}

// The culling remedy is replayed at the shortest `after` of an enabled policy's terminating
// rules (a notify rule frees nothing); without one at 1 h, and the basis says which.
TEST(PlanReportLink, TimeoutComesFromThePolicyElseOneHour) {
    policy::PolicyConfig p;
    EXPECT_EQ(cli::culling_timeout(p).us, k_h);
    EXPECT_NE(cli::culling_timeout(p).basis.find("by default"), std::string::npos);
    p.rules = {rule("warn", 10 * k_m, policy::Action::notify),
               rule("reclaim-4h", 4 * k_h, policy::Action::terminate),
               rule("reclaim-2h", 2 * k_h, policy::Action::terminate)};
    EXPECT_EQ(cli::culling_timeout(p).us, k_h); // [policy] not enabled
    p.enabled = true;
    const cli::PlanTimeout t = cli::culling_timeout(p);
    EXPECT_EQ(t.us, 2 * k_h);
    EXPECT_NE(t.basis.find("\"reclaim-2h\""), std::string::npos) << t.basis;
    EXPECT_NE(t.basis.find("dry run"), std::string::npos) << t.basis;
    p.rules[2].users = {"alice"};
    EXPECT_NE(cli::culling_timeout(p).basis.find("applied here to every session"),
              std::string::npos);
}

report::ReportModel model_with(std::optional<report::PlanLink> link) {
    report::ReportModel m;
    m.cost.currency = "USD";
    for (const char* id : {"idle-culling", "data-loader", "gpu-sharing"}) {
        audit::Recommendation r;
        r.id = id;
        r.title = id;
        r.evidence = {"x"};
        m.advice.recommendations.push_back(r);
    }
    m.plan_link = std::move(link);
    return m;
}

// The culling and sharing items gain a `plan` object (the other items and keys do not change);
// text and HTML state the figures and the confidence; a report without --plan has none of it.
TEST(PlanReportLink, RemediesCarryThePlanInEveryFormat) {
    const report::PlanLink link = staggered_link(k_h);
    const report::ReportModel m = model_with(link);
    const nlohmann::json j = nlohmann::json::parse(report::render_json(m));
    const nlohmann::json& items = j["recommendations"]["items"];
    const nlohmann::json& culling = items[0]["plan"];
    EXPECT_EQ(culling["computed"], true);
    EXPECT_EQ(culling["idle_timeout_s"], 3600.0);
    ASSERT_EQ(culling["scenarios"].size(), 2U);
    EXPECT_TRUE(culling["scenarios"][0]["idle_timeout_s"].is_null());
    EXPECT_EQ(culling["scenarios"][1]["gpus_needed"], 2);
    EXPECT_EQ(culling["scenarios"][1]["gpus_released"], 6);
    EXPECT_EQ(culling["confidence"]["coverage"], 1.0);
    EXPECT_EQ(culling["confidence"]["raw_retention_days"], 30.0);
    EXPECT_FALSE(items[1].contains("plan"));
    const nlohmann::json& sharing = items[2]["plan"];
    ASSERT_EQ(sharing["scenarios"].size(), 4U);
    std::set<std::string> shares;
    for (const nlohmann::json& s : sharing["scenarios"]) {
        shares.insert(s["share"].get<std::string>());
    }
    EXPECT_EQ(shares, (std::set<std::string>{"mig", "mps"}));

    const std::string text = one_line(report::render_text(m, report::TextOptions{}));
    EXPECT_NE(text.find("plan: the same work fits on 2 GPUs at T = 1h (8 recorded)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("6 released, $8,640.00/month"), std::string::npos) << text;
    EXPECT_NE(text.find("plan: the same work fits on 1 GPU with MPS, without a timeout"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("confidence: raw card-ticks cover 100"), std::string::npos);
    const std::string html = report::render_html(m);
    const std::string field = "data-field=\"recommendations.items.0.plan.scenarios.1.gpus_needed\"";
    const std::size_t at = html.find(field);
    ASSERT_NE(at, std::string::npos);
    EXPECT_LT(at, html.find("</article>", html.find("<article class=\"rec\">")));

    const report::ReportModel plain = model_with(std::nullopt);
    EXPECT_EQ(report::render_json(plain).find("\"plan\""), std::string::npos);
    EXPECT_EQ(report::render_text(plain, report::TextOptions{}).find("plan:"), std::string::npos);
    // With --plan every other key is as it was: dropping `plan` gives the plain report back.
    nlohmann::json stripped = j;
    for (nlohmann::json& item : stripped["recommendations"]["items"]) {
        item.erase("plan");
    }
    EXPECT_EQ(stripped, nlohmann::json::parse(report::render_json(plain)));
}

// A window without raw card-ticks is a flagged gap in the remedy, never "0 GPUs needed".
TEST(PlanReportLink, WindowWithoutRawTicksSaysSo) {
    testing::TempDb t;
    report::BuildOptions o;
    o.from = 0;
    o.to = k_h;
    const report::PlanLink link = cli::replay_for_report(t.db, o, config::Config{});
    EXPECT_TRUE(link.scenarios.empty());
    EXPECT_NE(link.unavailable.find("no raw card-ticks"), std::string::npos);
    const report::ReportModel m = model_with(link);
    const nlohmann::json j = nlohmann::json::parse(report::render_json(m));
    EXPECT_EQ(j["recommendations"]["items"][0]["plan"]["computed"], false);
    EXPECT_FALSE(j["recommendations"]["items"][0]["plan"].contains("scenarios"));
    EXPECT_NE(report::render_text(m, report::TextOptions{}).find("plan: not replayed"),
              std::string::npos);
}

/// Leaf key names of `j`.
void keys(const nlohmann::json& j, std::set<std::string>& out) {
    for (const auto& [key, value] : j.items()) {
        if (value.is_object()) {
            keys(value, out);
        } else if (value.is_array() && !value.empty() && value[0].is_object()) {
            keys(value[0], out);
        }
        out.insert(key);
    }
}

// docs/report-json.md names every key of the `plan` object in its
// `recommendations.items[].plan` rows.
TEST(PlanReportLink, EveryPlanKeyIsDocumented) {
    std::ifstream doc(std::string(GUA_SOURCE_DIR) + "/docs/report-json.md");
    ASSERT_TRUE(doc);
    std::string rows;
    for (std::string line; std::getline(doc, line);) {
        if (line.starts_with("| `recommendations.items[].plan")) {
            rows += line + "\n";
        }
    }
    const nlohmann::json j =
        nlohmann::json::parse(report::render_json(model_with(staggered_link(k_h))));
    std::set<std::string> names;
    keys(j["recommendations"]["items"][0]["plan"], names);
    names.insert("not_computed_reason");
    for (const std::string& key : names) {
        EXPECT_NE(rows.find(key), std::string::npos) << key << " is not in docs/report-json.md";
    }
}

} // namespace report_link_test
} // namespace gua::plan_test

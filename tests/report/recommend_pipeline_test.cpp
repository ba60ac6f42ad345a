// SPDX-License-Identifier: Apache-2.0
// Every synthetic workload through the real pipeline (sampler → SQLite store → report) in-process
// on a simulated clock: exactly the rules built for it fire, and §7/§8 are consistent.
#include "core/clock.hpp"
#include "core/timezone.hpp"
#include "identity/resolver.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "sampler/sampler.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "telemetry/synthetic.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <unistd.h>

namespace gua::report {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

/// A Monday, 00:00 UTC: one-week workloads cover every weekday and hour once.
constexpr TimeUs k_monday = 1'777'852'800 * k_us_per_second; // 2026-05-04T00:00:00Z
/// Tuesday 10:00 UTC: short workloads run in office hours.
constexpr TimeUs k_tuesday_10 = k_monday + k_us_per_day + 10 * k_us_per_hour;

struct Case {
    std::string workload;
    int ticks;
    DurationUs interval_us;
    TimeUs start;
    std::vector<std::string> rules;  ///< sorted
    std::vector<std::string> health; ///< §8's health remedies, sorted
};

/// The matrix. Each rule has a workload built for it on which it is the only rule that fires
/// (cotenants, notebook, offhours, steady-under, computebound, memfull; bursty adds a steady card
/// to its starved one); the mixed workloads (classic, overnight) fire what their cards call for.
std::vector<Case> cases() {
    const DurationUs ten_s = 10 * k_us_per_second;
    return {
        {"classic",
         30,
         k_us_per_second,
         k_tuesday_10,
         {"gpu-sharing", "idle-culling"},
         {"thermal-throttling"}},
        {"bursty", 60, ten_s, k_tuesday_10, {"data-loader", "larger-batches"}, {}},
        {"overnight",
         168,
         k_us_per_hour,
         k_monday,
         {"gpu-sharing", "idle-culling", "larger-batches", "off-hours"},
         {}},
        {"cotenants", 60, ten_s, k_tuesday_10, {"idle-culling"}, {}},
        {"notebook", 60, ten_s, k_tuesday_10, {"gpu-sharing"}, {}},
        {"offhours", 168, k_us_per_hour, k_monday, {"off-hours"}, {}},
        {"steady-under", 60, ten_s, k_tuesday_10, {"larger-batches"}, {}},
        {"computebound", 60, ten_s, k_tuesday_10, {"compute-bound"}, {}},
        {"memfull", 60, ten_s, k_tuesday_10, {"memory-bound"}, {}},
        {"staggered", 960, k_us_per_minute, k_tuesday_10, {"gpu-sharing", "idle-culling"}, {}},
        // GPU 3 idles holding a fifth of its memory; GPUs 0 and 1 are steady above 90 %.
        {"health",
         60,
         ten_s,
         k_tuesday_10,
         {"compute-bound", "gpu-sharing", "idle-culling"},
         {"busy-but-light", "dram-bound", "ghost-memory", "imbalance", "memory-pressure",
          "power-capping", "tensor-idle", "thermal-throttling"}},
    };
}

class Pipeline {
  public:
    explicit Pipeline(const Case& c)
        : m_dir(std::filesystem::path(::testing::TempDir()) /
                ("gua-pipeline-" + std::to_string(getpid()) + "-" + c.workload)) {
        std::filesystem::create_directories(m_dir);
        SimulatedClock clock(c.start);
        const auto source =
            telemetry::make_synthetic_source(c.workload, clock.wall_now(), c.interval_us, 1);
        if (!source) {
            throw std::runtime_error("unknown workload " + c.workload);
        }
        store::Database db(path(), store::OpenMode::create);
        store::migrate(db);
        store::Writer writer(db, store::RunInfo{"test", source->driver_version(),
                                                "synthetic:" + c.workload, c.interval_us, 10.0,
                                                clock.wall_now()});
        identity::Resolver resolver;
        sampler::SamplerOptions so;
        so.interval_us = c.interval_us;
        so.max_ticks = static_cast<std::uint64_t>(c.ticks);
        sampler::Sampler sampler(*source, clock, resolver, so);
        const std::atomic<bool> stop{false};
        sampler.run(stop, [&](const telemetry::Tick& tick) { writer.write(tick); });
        writer.finish(clock.wall_now());
        m_options.from = c.start;
        m_options.to = clock.wall_now();
        m_options.window_label = "test";
    }
    ~Pipeline() {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    std::string path() const { return (m_dir / "gua.db").string(); }
    BuildOptions& options() { return m_options; }

    ReportModel report() {
        store::Database db(path(), store::OpenMode::read_only);
        return build_report(db, m_options, TimeZone::load("UTC").value());
    }

  private:
    std::filesystem::path m_dir;
    BuildOptions m_options;
};

std::vector<std::string> fired(const ReportModel& m) {
    std::vector<std::string> ids;
    for (const audit::Recommendation& r : m.advice.recommendations) {
        ids.push_back(r.id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

class WorkloadRules : public ::testing::TestWithParam<Case> {};

TEST_P(WorkloadRules, ExactlyTheExpectedRulesFire) {
    Pipeline p(GetParam());
    const ReportModel m = p.report();
    EXPECT_THAT(fired(m), ElementsAreArray(GetParam().rules));
    std::vector<std::string> remedies;
    if (m.health) {
        for (const HealthRemedy& r : m.health->remedies) {
            remedies.push_back(r.id);
        }
    }
    std::sort(remedies.begin(), remedies.end());
    EXPECT_THAT(remedies, ElementsAreArray(GetParam().health));
    const audit::Combination& c = m.advice.combination;
    EXPECT_GT(c.total, 0.0);
    EXPECT_LE(c.total, 1.0);
    EXPECT_LE(c.savings, c.baseline);
    EXPECT_LE(m.advice.savings_rate.hourly_cents, m.advice.baseline_rate.hourly_cents);
    for (const audit::Recommendation& r : m.advice.recommendations) {
        EXPECT_FALSE(r.evidence.empty()) << r.id;
        EXPECT_FALSE(r.gpus.empty()) << r.id;
        EXPECT_GT(r.addressed_gpu_hours, 0.0) << r.id;
        EXPECT_GT(r.fraction, 0.0) << r.id;
        EXPECT_LE(r.fraction, c.total + 1e-12) << r.id;
    }
    // §7 rows add up to their total exactly, and the waste run-rate is exact in whole cents.
    audit::StateCost sum;
    for (const GpuCostRow& g : m.cost.gpus) {
        sum += g.cost;
    }
    EXPECT_EQ(sum.total_cents(), m.cost.total.total_cents());
    EXPECT_EQ(m.cost.waste_rate.monthly_cents(), m.cost.waste_rate.hourly_cents * 720);
    EXPECT_EQ(m.cost.waste_rate.hourly_cents,
              m.cost.idle_held_rate.hourly_cents + m.cost.truly_idle_rate.hourly_cents);
}

INSTANTIATE_TEST_SUITE_P(Demo, WorkloadRules, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                             std::string name = param.param.workload;
                             name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                             return name;
                         });

TEST(WorkloadRules, EveryWorkloadIsInTheMatrixAndEveryRuleHasOne) {
    std::set<std::string> in_matrix;
    std::set<std::string> rules;
    for (const Case& c : cases()) {
        in_matrix.insert(c.workload);
        rules.insert(c.rules.begin(), c.rules.end());
    }
    for (const telemetry::WorkloadInfo& w : telemetry::workloads()) {
        EXPECT_TRUE(in_matrix.contains(std::string(w.name))) << w.name;
    }
    EXPECT_THAT(rules, ElementsAre("compute-bound", "data-loader", "gpu-sharing", "idle-culling",
                                   "larger-batches", "memory-bound", "off-hours"));
    std::set<std::string> health;
    for (const Case& c : cases()) {
        health.insert(c.health.begin(), c.health.end());
    }
    EXPECT_THAT(health, ElementsAre("busy-but-light", "dram-bound", "ghost-memory", "imbalance",
                                    "memory-pressure", "power-capping", "tensor-idle",
                                    "thermal-throttling"));
}

TEST(ReportMoney, DemoTextHasCostAndAdviceBetweenEfficiencyAndVerdict) {
    Pipeline p(cases()[0]);
    const ReportModel m = p.report();
    ASSERT_GE(m.advice.recommendations.size(), 2u);
    const std::string text = render_text(m, TextOptions{});
    const auto at = [&](const char* s) { return text.find(s); };
    ASSERT_NE(at("§7 Cost"), std::string::npos);
    ASSERT_NE(at("§8 Recommendations"), std::string::npos);
    EXPECT_LT(at("§6 Efficiency"), at("§7 Cost"));
    EXPECT_LT(at("§7 Cost"), at("§8 Recommendations"));
    EXPECT_LT(at("§8 Recommendations"), at("Verdict"));
    EXPECT_NE(at("cull_idle_timeout"), std::string::npos);
    EXPECT_NE(at("MIG"), std::string::npos);
    EXPECT_NE(at("Combined: "), std::string::npos);
    EXPECT_NE(at("/month (× 720 h)"), std::string::npos);

    const nlohmann::json j = nlohmann::json::parse(render_json(m));
    EXPECT_EQ(j["cost"]["currency"], "USD");
    EXPECT_EQ(j["cost"]["price_source"], "built_in");
    EXPECT_EQ(j["cost"]["gpus"].size(), 3u);
    EXPECT_EQ(j["cost"]["gpus"][0]["price_per_gpu_hour"], 2.0);
    EXPECT_EQ(j["cost"]["waste_run_rate"]["monthly_cents"].get<std::int64_t>(),
              j["cost"]["waste_run_rate"]["hourly_cents"].get<std::int64_t>() * 720);
    EXPECT_EQ(j["recommendations"]["items"].size(), m.advice.recommendations.size());
    EXPECT_EQ(j["recommendations"]["items"][0]["id"], "idle-culling");
    EXPECT_EQ(j["recommendations"]["combined"]["groups"][0]["remedies"], 2);
    EXPECT_EQ(j["recommendations"]["combined"]["monthly_cents"].get<std::int64_t>(),
              j["recommendations"]["combined"]["hourly_cents"].get<std::int64_t>() * 720);
}

TEST(ReportMoney, PriceOverrideAndTeams) {
    Pipeline p(cases()[3]); // cotenants: grace trains, heidi holds 20 GiB idle
    p.options().pricing.override_micros_per_gpu_hour = 3'500'000;
    p.options().grouping.by = audit::GroupBy::team;
    p.options().grouping.team_of = {{"grace", "vision"}};
    const ReportModel m = p.report();
    ASSERT_EQ(m.cost.gpus.size(), 1u);
    EXPECT_EQ(m.cost.gpus[0].micros_per_gpu_hour, 3'500'000);
    EXPECT_TRUE(m.cost.price_overridden);
    // 10 minutes of an L40S at $3.50: 58 cents, all of it active or idle-held.
    EXPECT_EQ(m.cost.total.total_cents(), 58);
    EXPECT_EQ(m.cost.total.truly_idle_cents, 0);
    std::vector<std::string> names;
    for (const IdentityRow& r : m.identities) {
        names.push_back(r.name);
    }
    EXPECT_THAT(names, ElementsAre("vision", "(no team)"));
    ASSERT_EQ(m.cost.identities.size(), 2u);
    EXPECT_EQ(m.cost.identities[0].name, "vision");
    EXPECT_EQ(m.cost.identities[1].name, "(no team)");
    EXPECT_EQ(m.cost.identities[1].active_cents, 0);
    const std::int64_t attributed = m.cost.identities[0].active_cents +
                                    m.cost.identities[0].idle_held_cents +
                                    m.cost.identities[1].idle_held_cents;
    EXPECT_NEAR(static_cast<double>(attributed),
                static_cast<double>(m.cost.total.active_cents + m.cost.total.idle_held_cents), 2);
    ASSERT_EQ(m.advice.recommendations.size(), 1u);
    EXPECT_THAT(m.advice.recommendations[0].identities, ElementsAre("(no team)", "vision"));
}

/// The health workload's remedies against its scenario (src/telemetry/synthetic.cpp): 60 ticks of
/// 10 s per card; GPU 0 at 1650 of 1980 MHz and thermally throttled two ticks in three (1980 MHz
/// in the third), DRAM at 72 %; GPU 1 power-capped all the time at 1755 MHz, FP32 pipes 55 % and
/// tensor 1.5 %; GPU 2 light (SM active 6 %, 120 of 700 W) and at 76,000 of 81,559 MiB; GPU 3
/// with 6,144 MiB that no process holds; olga on GPUs 0, 1 and 3.
TEST(HealthRemedies, WorthFollowsTheScenario) {
    const std::vector<Case> all = cases();
    const auto c =
        std::find_if(all.begin(), all.end(), [](const Case& k) { return k.workload == "health"; });
    ASSERT_NE(c, all.end());
    Pipeline p(*c);
    const ReportModel m = p.report();
    ASSERT_TRUE(m.health);
    const double card_hours = 60 * 10.0 / 3600.0;
    const auto remedy = [&](const std::string& id) -> const HealthRemedy& {
        const auto r = std::find_if(m.health->remedies.begin(), m.health->remedies.end(),
                                    [&](const HealthRemedy& x) { return x.id == id; });
        if (r == m.health->remedies.end()) {
            throw std::runtime_error("no remedy " + id);
        }
        return *r;
    };
    const auto price_cents = [&](int gpu, double hours) {
        for (const GpuCostRow& g : m.cost.gpus) {
            if (g.index == gpu) {
                return hours * static_cast<double>(g.micros_per_gpu_hour) / 10'000.0;
            }
        }
        throw std::runtime_error("no price");
    };
    const auto near = [](double actual, double expected) {
        EXPECT_NEAR(actual, expected, expected * 0.01 + 1e-9);
    };

    const HealthRemedy& heat = remedy("thermal-throttling");
    EXPECT_THAT(heat.gpus, ElementsAre(0));
    ASSERT_TRUE(heat.addressed_gpu_hours && heat.at_most_gpu_hours && heat.at_most_cents);
    near(*heat.addressed_gpu_hours, card_hours * 2 / 3);
    const double heat_lost = card_hours * (1 - (2.0 / 3 * 1650 + 1.0 / 3 * 1980) / 1980);
    near(*heat.at_most_gpu_hours, heat_lost);
    EXPECT_NEAR(static_cast<double>(*heat.at_most_cents), price_cents(0, heat_lost), 1.0);

    const HealthRemedy& power = remedy("power-capping");
    EXPECT_THAT(power.gpus, ElementsAre(1));
    ASSERT_TRUE(power.addressed_gpu_hours && power.at_most_gpu_hours);
    near(*power.addressed_gpu_hours, card_hours);
    near(*power.at_most_gpu_hours, card_hours * (1 - 1755.0 / 1980));

    const HealthRemedy& light = remedy("busy-but-light");
    EXPECT_THAT(light.gpus, ElementsAre(2));
    ASSERT_TRUE(light.addressed_gpu_hours && light.addressed_cents);
    near(*light.addressed_gpu_hours, card_hours);
    EXPECT_NEAR(static_cast<double>(*light.addressed_cents), price_cents(2, card_hours), 1.0);
    EXPECT_FALSE(light.at_most_gpu_hours); // no recovery is claimed

    const HealthRemedy& full = remedy("memory-pressure");
    EXPECT_THAT(full.gpus, ElementsAre(2));
    ASSERT_TRUE(full.addressed_gpu_hours);
    near(*full.addressed_gpu_hours, card_hours);
    EXPECT_FALSE(full.addressed_cents); // an out-of-memory risk, not priced

    const HealthRemedy& ghost = remedy("ghost-memory");
    EXPECT_THAT(ghost.gpus, ElementsAre(3));
    ASSERT_TRUE(ghost.addressed_gpu_hours);
    near(*ghost.addressed_gpu_hours, card_hours * 6144.0 / 81559.0);

    const HealthRemedy& spread = remedy("imbalance");
    EXPECT_THAT(spread.gpus, ElementsAre(3));
    ASSERT_EQ(spread.evidence.size(), 1u);
    EXPECT_THAT(spread.evidence[0], HasSubstr("olga held 3 cards"));
    EXPECT_FALSE(spread.addressed_gpu_hours);

    // GPU 1's FP32 pipes were busy 55 % of its time (GPM), its tensor pipes 1.5 %: at most that
    // FP32 time is won back on the Tensor Cores.
    const HealthRemedy& tensor = remedy("tensor-idle");
    EXPECT_THAT(tensor.gpus, ElementsAre(1));
    ASSERT_TRUE(tensor.addressed_gpu_hours && tensor.at_most_gpu_hours);
    near(*tensor.addressed_gpu_hours, card_hours);
    near(*tensor.at_most_gpu_hours, card_hours * 0.55);
    // GPU 0's DRAM bandwidth averaged 72 % of its peak.
    const HealthRemedy& dram = remedy("dram-bound");
    EXPECT_THAT(dram.gpus, ElementsAre(0));
    ASSERT_TRUE(dram.addressed_gpu_hours);
    near(*dram.addressed_gpu_hours, card_hours);
    EXPECT_FALSE(dram.at_most_gpu_hours);

    // Ordered by worth: the light card ($ of a whole card-hour) before the throttled cards.
    EXPECT_EQ(m.health->remedies.front().id, "busy-but-light");
}

} // namespace
} // namespace gua::report

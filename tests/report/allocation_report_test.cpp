// SPDX-License-Identifier: Apache-2.0
// The report with allocations, from card-ticks built by hand: the fourth state in §1–§3, §4's
// owners, the matrix, cost, the verdict on blocked time and §8's over-allocation rule, each
// against figures integrated here from the scenario; and no trace of it without allocations.
#include "audit/window.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "report/timeline.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace gua::report {
namespace allocation_report_test {

constexpr TimeUs k_t0 = 1'777'852'800 * k_us_per_second; // 2026-05-04T00:00:00Z, a Monday
constexpr DurationUs k_tick = 60 * k_us_per_second;
constexpr double k_hour = 3600.0;

/// The scenario, one hour of 60 s ticks on three A100s ($2 per GPU-hour by default):
/// - GPU 0 and GPU 1: Slurm job 42 of carol (account physics) the whole hour. GPU 0 active with
///   carol's process for 40 min, then idle and not held for 20 min; GPU 1 never touched.
/// - GPU 2: no allocation. bob active for 20 min, then holds memory idle for 10 min (idle-held),
///   then nothing for 30 min (truly idle).
enum class Kind { active, unused, held, idle };

audit::CardTick tick(std::uint32_t gpu, int minute, Kind kind, bool allocated,
                     std::uint32_t identity) {
    audit::CardTick t;
    t.gpu = gpu;
    t.t0 = k_t0 + minute * k_tick;
    t.duration_us = k_tick;
    t.util_source = telemetry::UtilSource::samples;
    if (kind == Kind::active) {
        t.active_us = k_tick;
        t.util_pct = 100;
        t.bucket_us[3] = k_tick;
        t.processes.push_back(audit::ProcTick{identity, telemetry::ProcessType::compute, 4000,
                                              100.0, k_tick, DurationUs{0}});
    } else {
        t.active_us = 0;
        t.util_pct = 0;
        t.bucket_us[0] = k_tick;
        if (kind == Kind::held) {
            t.processes.push_back(audit::ProcTick{identity, telemetry::ProcessType::compute, 2000,
                                                  0.0, DurationUs{0}, k_tick});
        } else {
            t.idle_unlisted_us = k_tick;
        }
    }
    if (allocated) {
        t.allocation.allocated_us = k_tick;
        t.allocation.active_us = kind == Kind::active ? k_tick : 0;
        t.allocation.unused_us = kind == Kind::unused ? k_tick : 0;
        t.allocations.push_back(audit::AllocationShare{0, k_tick});
    }
    return t;
}

struct Scenario {
    std::vector<store::GpuRow> gpus{
        {0, "GPU-00000000-0000", 0, "NVIDIA A100-SXM4-80GB", 81920, ""},
        {1, "GPU-11111111-1111", 1, "NVIDIA A100-SXM4-80GB", 81920, ""},
        {2, "GPU-22222222-2222", 2, "NVIDIA A100-SXM4-80GB", 81920, ""}};
    std::vector<store::IdentityRow> identities;
    std::vector<audit::AllocationRow> allocations{
        {"slurm-job", "42", "carol", "physics", "node1", k_t0, k_t0 + 60 * k_tick}};

    Scenario() {
        telemetry::Identity bob;
        bob.user = "bob";
        telemetry::Identity carol;
        carol.user = "carol";
        identities = {{1, bob}, {2, carol}};
    }

    /// The report of the hour; `with_allocations` false drops every allocation field.
    ReportModel report(bool with_allocations) const {
        BuildOptions o;
        o.from = k_t0;
        o.to = k_t0 + 60 * k_tick;
        o.window_label = "1h";
        audit::WindowAccumulator acc(o.thresholds, 0, [](TimeUs) { return std::pair{1, 0}; });
        TimelineGrid timeline(o.from, o.to);
        acc.set_span_sink([&](std::uint32_t gpu, TimeUs from, TimeUs to,
                              const audit::StateTimes& s) { timeline.add(gpu, from, to, s); });
        for (int minute = 0; minute < 60; ++minute) {
            const bool a = with_allocations;
            acc.add(tick(0, minute, minute < 40 ? Kind::active : Kind::unused, a, 2));
            acc.add(tick(1, minute, Kind::unused, a, 2));
            acc.add(tick(2, minute,
                         minute < 20   ? Kind::active
                         : minute < 30 ? Kind::held
                                       : Kind::idle,
                         false, 1));
        }
        ReportModel m;
        const std::vector<audit::AllocationRow> none;
        build_sections(acc, WindowTables{gpus, identities, with_allocations ? allocations : none},
                       o, timeline, m);
        m.samples = acc.ticks();
        return m;
    }
};

TEST(AllocationReport, TheFourthStateAddsUpWithTheOthers) {
    const ReportModel m = Scenario().report(true);
    ASSERT_TRUE(m.allocation);
    // Integrated: active 40 + 20 min, idle-held 10 min, allocated-unused 20 + 60 min, truly
    // idle 30 min, of 3 card-hours.
    const StateShares& h = m.headline;
    EXPECT_NEAR(h.active_hours, 1.0, 1e-12);
    EXPECT_NEAR(h.idle_held_hours, 10.0 / 60.0, 1e-12);
    EXPECT_NEAR(h.allocated_unused_hours, 80.0 / 60.0, 1e-12);
    EXPECT_NEAR(h.truly_idle_hours, 0.5, 1e-12);
    EXPECT_NEAR(h.allocated_unused, (80.0 / 60.0) / 3.0, 1e-12);
    EXPECT_NEAR(h.active + h.idle_held + h.allocated_unused + h.truly_idle + h.unmeasured, 1.0,
                1e-12);
    ASSERT_EQ(m.gpus.size(), 3u);
    EXPECT_NEAR(m.gpus[0].shares.allocated_unused, 1.0 / 3.0, 1e-12);
    EXPECT_NEAR(m.gpus[1].shares.allocated_unused, 1.0, 1e-12);
    EXPECT_EQ(m.gpus[2].shares.allocated_unused, 0.0);
    // The timeline carries it too: GPU 1's spans are allocated-unused only.
    double timeline_unused = 0;
    for (const TimelineSpan& s : m.timeline.gpus[1].spans) {
        timeline_unused += s.allocated_unused_hours;
        EXPECT_EQ(s.truly_idle_hours, 0.0);
    }
    EXPECT_NEAR(timeline_unused, 1.0, 1e-9);
}

TEST(AllocationReport, MatrixOwnersAndUseOutsideTheScheduler) {
    const ReportModel m = Scenario().report(true);
    ASSERT_TRUE(m.allocation);
    const AllocationSection& a = *m.allocation;
    EXPECT_EQ(a.allocations, 1u);
    EXPECT_NEAR(a.allocated_active_hours, 40.0 / 60.0, 1e-12);
    EXPECT_EQ(a.allocated_idle_held_hours, 0.0);
    EXPECT_NEAR(a.allocated_unused_hours, 80.0 / 60.0, 1e-12);
    EXPECT_NEAR(a.unallocated_active_hours, 20.0 / 60.0, 1e-12);
    EXPECT_NEAR(a.unallocated_idle_held_hours, 10.0 / 60.0, 1e-12);
    EXPECT_NEAR(a.truly_idle_hours, 0.5, 1e-12);
    EXPECT_EQ(a.unknown_hours, 0.0);
    // The job's owner: 2 card-hours allocated, 80 min of them unused, at $2 per GPU-hour: GPU 0's
    // 20 min is 66.67 ¢ (67 rounded), GPU 1's hour 200 ¢.
    ASSERT_EQ(a.owners.size(), 1u);
    EXPECT_EQ(a.owners[0].name, "carol");
    EXPECT_EQ(a.owners[0].kind, "user");
    EXPECT_NEAR(a.owners[0].allocated_hours, 2.0, 1e-12);
    EXPECT_NEAR(a.owners[0].allocated_unused_hours, 80.0 / 60.0, 1e-12);
    EXPECT_EQ(a.owners[0].allocated_unused_cents, 67 + 200);
    // bob used GPU 2 without an allocation.
    ASSERT_EQ(a.unallocated_use.size(), 1u);
    EXPECT_EQ(a.unallocated_use[0].name, "bob");
    EXPECT_NEAR(a.unallocated_use[0].active_hours, 20.0 / 60.0, 1e-12);
    EXPECT_NEAR(a.unallocated_use[0].idle_held_hours, 10.0 / 60.0, 1e-12);
}

TEST(AllocationReport, IdentityHoursStayActivePlusIdleHeld) {
    const ReportModel m = Scenario().report(true);
    const auto find = [&](const std::string& name) {
        return *std::find_if(m.identities.begin(), m.identities.end(),
                             [&](const IdentityRow& r) { return r.name == name; });
    };
    // carol's allocated-unused 80 min is hers in §4's owner table, not in her GPU-hours.
    EXPECT_NEAR(find("carol").gpu_hours, 40.0 / 60.0, 1e-12);
    EXPECT_NEAR(find("bob").gpu_hours, 30.0 / 60.0, 1e-12);
}

TEST(AllocationReport, CostAndVerdictCountBlockedTime) {
    const ReportModel with = Scenario().report(true);
    EXPECT_EQ(with.cost.total.allocated_unused_cents, 67 + 200);
    // Blocked = idle-held 10 min + allocated-unused 80 min of 180 measured minutes = 50 %.
    EXPECT_NEAR(with.waste.blocked_share, 90.0 / 180.0, 1e-12);
    EXPECT_NEAR(with.waste.idle_held_share, 10.0 / 180.0, 1e-12);
    EXPECT_TRUE(with.waste.policy_problem);
    const std::string text = render_text(with, TextOptions{});
    EXPECT_NE(text.find("allocated-unused"), std::string::npos);
    EXPECT_NE(text.find("Blocked time (idle-held 5.6% + allocated-unused 44.4%) is 50.0%"),
              std::string::npos)
        << text;
    // The same hour without allocations: GPU 1 truly idle, idle-held 5.6 % is within the rule.
    const ReportModel without = Scenario().report(false);
    EXPECT_FALSE(without.allocation);
    EXPECT_FALSE(without.waste.policy_problem);
    EXPECT_NEAR(without.headline.truly_idle_hours, 0.5 + 80.0 / 60.0, 1e-12);
}

TEST(AllocationReport, JsonKeysOnlyWithAllocations) {
    const nlohmann::json with = nlohmann::json::parse(render_json(Scenario().report(true)));
    EXPECT_NEAR(with["headline"]["allocated_unused"].get<double>(), (80.0 / 60.0) / 3.0, 1e-12);
    EXPECT_NEAR(with["headline"]["allocated_unused_gpu_hours"].get<double>(), 80.0 / 60.0, 1e-12);
    EXPECT_NEAR(with["gpus"][1]["states"]["allocated_unused"].get<double>(), 1.0, 1e-12);
    EXPECT_NEAR(with["allocations"]["matrix"]["unallocated"]["active_gpu_hours"].get<double>(),
                20.0 / 60.0, 1e-12);
    EXPECT_EQ(with["policy_verdict"]["judged"], "blocked");
    EXPECT_EQ(with["cost"]["total"]["allocated_unused_cents"], 267);
    const std::string without = render_json(Scenario().report(false));
    EXPECT_EQ(without.find("allocated"), std::string::npos);
    EXPECT_EQ(without.find("\"allocations\""), std::string::npos);
    const std::string text = render_text(Scenario().report(false), TextOptions{});
    EXPECT_EQ(text.find("allocated-unused"), std::string::npos);
    EXPECT_EQ(render_html(Scenario().report(false)).find("allocated-unused"), std::string::npos);
    EXPECT_EQ(render_csv(Scenario().report(false), CsvTable::gpus).find("allocated"),
              std::string::npos);
    EXPECT_NE(render_csv(Scenario().report(true), CsvTable::gpus).find("allocated_unused"),
              std::string::npos);
    EXPECT_NE(render_html(Scenario().report(true)).find("id=\"allocations\""), std::string::npos);
}

TEST(AllocationReport, OverAllocationRuleClaimsOnlyTheUnusedPool) {
    const ReportModel m = Scenario().report(true);
    const auto rule =
        std::find_if(m.advice.recommendations.begin(), m.advice.recommendations.end(),
                     [](const audit::Recommendation& r) { return r.id == "over-allocation"; });
    ASSERT_NE(rule, m.advice.recommendations.end());
    // Job 42 used GPU 0 (unused a third of its time) and not GPU 1.
    ASSERT_FALSE(rule->evidence.empty());
    EXPECT_NE(rule->evidence[0].find("used 1 of 2 allocated GPUs"), std::string::npos)
        << rule->evidence[0];
    EXPECT_EQ(rule->pools, std::vector<audit::Pool>{audit::Pool::allocated_unused});
    EXPECT_NEAR(rule->addressed_gpu_hours, 80.0 / 60.0, 1e-9);
    EXPECT_EQ(rule->gpus, (std::vector<int>{0, 1}));
    // No other rule claims that pool: what idle-culling or off-hours address is disjoint.
    for (const audit::Recommendation& r : m.advice.recommendations) {
        if (r.id != "over-allocation") {
            EXPECT_EQ(std::count(r.pools.begin(), r.pools.end(), audit::Pool::allocated_unused), 0)
                << r.id;
        }
    }
}

} // namespace allocation_report_test
} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// Demand units from card-ticks (processes, gangs, unattributed busy time), their holds, and the
// MIG profile table's lookup by model and memory.
#include "plan/holds.hpp"
#include "plan/share.hpp"
#include "plan_ticks.hpp"

#include <gtest/gtest.h>

namespace gua::plan_test {
namespace demand_test { // named after the file: unique in a unity batch

constexpr DurationUs k_s = k_us_per_second;

TEST(PlanDemand, ProcessRowsAreUnitsSoAReusedPidIsANewOne) {
    plan::DemandBuilder b(context(1, 1, 1, 0));
    // Process row 7 for two ticks, then row 8 (the same pid restarted) for one.
    for (int i = 0; i < 3; ++i) {
        const std::vector<Proc> ps{Proc{i < 2 ? 7 : 8, 0, 1000, 50, true}};
        b.add(card_tick(0, i * 30 * k_s, 30 * k_s, ps), ids_of(ps));
    }
    const plan::Demand d = b.finish(0, 90 * k_s, std::nullopt);
    ASSERT_EQ(d.units.size(), 2U);
    EXPECT_EQ(d.units[0].phases, (std::vector<plan::Phase>{{0, 60 * k_s, true}}));
    EXPECT_EQ(d.units[1].phases, (std::vector<plan::Phase>{{60 * k_s, 90 * k_s, true}}));
    EXPECT_EQ(d.units[0].peak_mib, 1000);
    EXPECT_EQ(d.coverage.recorded_us, 90 * k_s);
    EXPECT_EQ(d.coverage.card_us, 90 * k_s);
}

TEST(PlanDemand, ProcessesOfOneIdentitySharingACardTickAreOneSession) {
    plan::DemandBuilder b(context(1, 1, 2, 0));
    // Rows 1 and 2 (identity 0) together, then row 3 (identity 0) after 1 has gone; row 4 is
    // another identity's co-tenant.
    const std::vector<std::vector<Proc>> ticks{
        {Proc{1, 0, 1000, 50, true}, Proc{2, 0, 500, 0, false}, Proc{4, 1, 300, 0, false}},
        {Proc{2, 0, 500, 0, false}, Proc{3, 0, 800, 10, true}, Proc{4, 1, 300, 0, false}}};
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        b.add(card_tick(0, static_cast<TimeUs>(i) * k_s, k_s, ticks[i]), ids_of(ticks[i]));
    }
    const plan::Demand d = b.finish(0, 2 * k_s, std::nullopt);
    ASSERT_EQ(d.units.size(), 2U);
    EXPECT_EQ(d.units[0].peak_mib, 1500); // rows 1 + 2 on one card
    EXPECT_EQ(d.units[0].phases, (std::vector<plan::Phase>{{0, 2 * k_s, true}}));
    EXPECT_EQ(d.units[1].peak_mib, 300);
    EXPECT_EQ(d.units[1].phases, (std::vector<plan::Phase>{{0, 2 * k_s, false}}));
}

TEST(PlanDemand, BusyTimeWithoutAListedProcessIsAWholeCardUnit) {
    plan::DemandBuilder b(context(1, 1, 0, 0));
    for (int i = 0; i < 4; ++i) {
        audit::CardTick t = card_tick(0, i * k_s, k_s, {});
        if (i != 2) { // active with nobody listed, except one truly idle tick
            t.active_us = k_s;
            t.idle_unlisted_us = 0;
        }
        b.add(t, {});
    }
    const plan::Demand d = b.finish(0, 4 * k_s, std::nullopt);
    ASSERT_EQ(d.units.size(), 2U); // the idle tick ends the first stretch
    EXPECT_EQ(d.units[0].kind, plan::UnitKind::unattributed);
    EXPECT_EQ(d.units[0].peak_mib, 81920);
    EXPECT_EQ(d.units[1].phases, (std::vector<plan::Phase>{{3 * k_s, 4 * k_s, true}}));
    EXPECT_EQ(d.coverage.unattributed_us, 3 * k_s);
}

TEST(PlanDemand, GangHeldWhereAnyCardHeldActiveWhereAnyWasActive) {
    plan::DemandContext ctx = context(2, 2, 1, 0);
    ctx.allocation_label = {"pod ns/train"};
    plan::DemandBuilder b(std::move(ctx));
    // Card 0 busy [0, 2 s) active then idle; card 1 busy [1 s, 3 s) idle.
    for (int i = 0; i < 3; ++i) {
        for (std::uint32_t g = 0; g < 2; ++g) {
            std::vector<Proc> ps;
            if (g == 0 && i < 2) {
                ps.push_back(Proc{1, 0, 500, 20, i == 0});
            }
            if (g == 1 && i >= 1) {
                ps.push_back(Proc{2, 0, 700, 0, false});
            }
            const auto owner = ps.empty() ? std::nullopt : std::optional<std::uint32_t>(0);
            b.add(card_tick(g, i * k_s, k_s, ps, owner), ids_of(ps));
        }
    }
    const plan::Demand d = b.finish(0, 3 * k_s, std::nullopt);
    ASSERT_EQ(d.units.size(), 1U);
    const plan::Unit& u = d.units[0];
    EXPECT_EQ(u.kind, plan::UnitKind::gang);
    EXPECT_EQ(u.label, "pod ns/train");
    EXPECT_EQ(u.gpus, 2);
    EXPECT_EQ(u.peak_mib, 700);
    EXPECT_EQ(u.phases, (std::vector<plan::Phase>{{0, k_s, true}, {k_s, 3 * k_s, false}}));
}

TEST(PlanHolds, GapsEndHoldsAndTimeoutsCutIdleStreaks) {
    plan::Demand d;
    plan::Unit u;
    // active 10 s, idle 100 s | gap | idle 5 s, active 5 s
    u.phases = {{0, 10 * k_s, true},
                {10 * k_s, 110 * k_s, false},
                {200 * k_s, 205 * k_s, false},
                {205 * k_s, 210 * k_s, true}};
    d.units.push_back(u);
    plan::Cuts none_cuts;
    EXPECT_EQ(plan::holds_of(d, std::nullopt, plan::Band::relaunch, none_cuts),
              (std::vector<plan::Hold>{{0, 110 * k_s, 0}, {200 * k_s, 210 * k_s, 0}}));
    EXPECT_EQ(none_cuts.killed, 0);
    plan::Cuts cuts;
    EXPECT_EQ(plan::holds_of(d, 30 * k_s, plan::Band::relaunch, cuts),
              (std::vector<plan::Hold>{{0, 40 * k_s, 0}, {200 * k_s, 210 * k_s, 0}}));
    EXPECT_EQ(cuts.killed, 1);
    EXPECT_EQ(cuts.resumed, 0); // it ended idle; the later stretch follows a gap
    EXPECT_EQ(cuts.held_saved_us, 70 * k_s);
}

TEST(PlanMig, ProfileTableByModelAndMemory) {
    EXPECT_EQ(plan::mig_card("NVIDIA H100 80GB HBM3", 81559)->key, "h100_80");
    EXPECT_EQ(plan::mig_card("NVIDIA H100 NVL", 95830)->key, "h100_94");
    EXPECT_EQ(plan::mig_card("NVIDIA H200", 143771)->key, "h200_141");
    EXPECT_EQ(plan::mig_card("NVIDIA A100-SXM4-40GB", 40960)->key, "a100_40");
    EXPECT_EQ(plan::mig_card("NVIDIA A100 80GB PCIe", 81920)->key, "a100_80");
    const auto a30 = plan::mig_card("NVIDIA A30", 24576);
    ASSERT_TRUE(a30);
    EXPECT_EQ(a30->compute_slices, 4);
    EXPECT_EQ(a30->profiles.front().name, "1g.6gb");
    EXPECT_FALSE(plan::mig_card("NVIDIA L40S", 46068));
    EXPECT_EQ(plan::mig_card("NVIDIA H200", 143771)->profiles.back().name, "7g.141gb");
}

TEST(PlanMig, UnitGetsTheSmallestProfileHoldingMemoryAndCompute) {
    plan::Pool pool{"NVIDIA H100 80GB HBM3", 81559, 1, 1, std::nullopt};
    const plan::Sizing s = plan::sizing_of(pool, plan::Share::mig);
    plan::Unit u;
    u.compute_measured = true;
    u.active_us = 1;
    u.compute_pct_us = 10; // 10 % while active
    u.peak_mib = 9000;     // + 10 % = 9900 MiB: under 81559 / 8 = 10194 MiB
    std::string profile;
    EXPECT_EQ(s.need(u, &profile), (plan::Capacity{1, 1}));
    EXPECT_EQ(profile, "1g.10gb");
    u.peak_mib = 9500; // 10450 MiB: two memory slices
    EXPECT_EQ(s.need(u, &profile), (plan::Capacity{1, 2}));
    EXPECT_EQ(profile, "1g.20gb");
    u.compute_pct_us = 50; // 50 % of the SMs: 4 of 7 compute slices
    EXPECT_EQ(s.need(u, &profile), (plan::Capacity{4, 4}));
    EXPECT_EQ(profile, "4g.40gb");
    u.gpus = 2; // gangs take whole cards
    EXPECT_EQ(s.need(u, &profile), (plan::Capacity{7, 8}));
}

} // namespace demand_test
} // namespace gua::plan_test

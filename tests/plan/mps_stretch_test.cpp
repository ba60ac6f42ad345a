// SPDX-License-Identifier: Apache-2.0
// MPS co-runners stretch: units sharing a card whose compute adds up to S > 100 % each run at
// 100/S of their pace (work conserved), so they end later, hold their card longer and delay what
// queues behind them. Expected ends are derived in the tests from the sharing rule.
#include "plan/place.hpp"
#include "plan/sweep.hpp"
#include "plan_ticks.hpp"

#include <gtest/gtest.h>

namespace gua::plan_test {
namespace mps_stretch_test { // named after the file: unique in a unity batch

constexpr DurationUs k_s = k_us_per_second;
constexpr std::int64_t k_card_mib = 81920;
const plan::Capacity k_mps_card{k_card_mib - k_card_mib / 20, 1};

plan::Request request(TimeUs arrival, DurationUs duration, std::int64_t mib, double load) {
    return plan::Request{arrival, duration, 1, plan::Capacity{mib, 0}, false, load};
}

/// How long `work` of a unit's own time takes while it shares a card with co-runners whose
/// loads add up to `sum` percent.
double shared_time(double work, double sum) {
    return sum > 100.0 ? work * sum / 100.0 : work;
}

// Two units of 80 % compute for 600 s start together on one 80 GB card: S = 160 %, each runs
// at 100/160 of its pace and both end at 600 s × 1.6 = 960 s; the card is in use until then.
TEST(PlanMpsStretch, TwoCoRunnersAt80PercentEndAt960s) {
    const std::vector<plan::Request> rs{request(0, 600 * k_s, 10240, 80),
                                        request(0, 600 * k_s, 10240, 80)};
    const auto end = static_cast<TimeUs>(shared_time(600 * k_s, 80 + 80));
    ASSERT_EQ(end, 960 * k_s);
    double run_us = 0;
    double solo_us = 0;
    const std::vector<plan::Step> steps = plan::unbounded(rs, k_mps_card, &run_us, &solo_us);
    EXPECT_EQ(steps, (std::vector<plan::Step>{{0, 1}, {end, 0}}));
    EXPECT_EQ(run_us, 2.0 * static_cast<double>(end));
    EXPECT_EQ(solo_us, 2.0 * 600 * k_s);
    EXPECT_DOUBLE_EQ(run_us / solo_us, 1.6);
}

// The second unit starts 300 s after the first. Alone, the first does 300 s of its work; then
// both share at 100/160: the first's 300 s left take 480 s (ends at 780 s), in which the second
// does 480 × 100/160 = 300 s; its other 300 s run alone (ends at 1080 s).
TEST(PlanMpsStretch, LateCoRunnerStretchesOnlyTheSharedPart) {
    const std::vector<plan::Request> rs{request(0, 600 * k_s, 10240, 80),
                                        request(300 * k_s, 600 * k_s, 10240, 80)};
    const double first_end = 300 * k_s + shared_time(300 * k_s, 160);
    const double second_done = (first_end - 300 * k_s) * 100.0 / 160.0;
    const double second_end = first_end + (600 * k_s - second_done);
    ASSERT_EQ(first_end, 780.0 * k_s);
    ASSERT_EQ(second_end, 1080.0 * k_s);
    double run_us = 0;
    double solo_us = 0;
    const std::vector<plan::Step> steps = plan::unbounded(rs, k_mps_card, &run_us, &solo_us);
    EXPECT_EQ(steps, (std::vector<plan::Step>{{0, 1}, {static_cast<TimeUs>(second_end), 0}}));
    EXPECT_DOUBLE_EQ(run_us, first_end + (second_end - 300 * k_s));
}

// Two 80 % units fill one card's memory (35 GB each); a third arrives at 700 s. Unstretched
// the first two would have ended at 600 s; stretched they end at 960 s, so on one card the
// third waits 260 s. A unit with no load beside them (an idle holder) is not slowed.
TEST(PlanMpsStretch, StretchedCoRunnersDelayTheQueue) {
    const std::vector<plan::Request> rs{request(0, 600 * k_s, 35840, 80),
                                        request(0, 600 * k_s, 35840, 80),
                                        request(700 * k_s, 600 * k_s, 35840, 80)};
    const auto never = [](bool, DurationUs) { return false; };
    const plan::Replay r = plan::replay(rs, k_mps_card, 1, 1, never);
    ASSERT_EQ(r.waits.size(), 3U);
    EXPECT_EQ(r.waits[0], 0);
    EXPECT_EQ(r.waits[1], 0);
    EXPECT_EQ(r.waits[2], static_cast<TimeUs>(shared_time(600 * k_s, 160)) - 700 * k_s);

    const std::vector<plan::Request> idle{request(0, 600 * k_s, 1024, 80),
                                          request(0, 600 * k_s, 1024, 80),
                                          request(0, 300 * k_s, 1024, 0)};
    const std::vector<plan::Step> steps = plan::unbounded(idle, k_mps_card);
    EXPECT_EQ(steps, (std::vector<plan::Step>{{0, 1}, {960 * k_s, 0}}));
    double run_us = 0;
    double solo_us = 0;
    plan::unbounded(idle, k_mps_card, &run_us, &solo_us);
    EXPECT_DOUBLE_EQ(run_us, 960.0 * k_s * 2 + 300.0 * k_s);
}

// Through the whole plan: two users' notebooks at 80 % SM, active 600 s on two cards of a
// recording of 1200 s. Exclusive keeps two cards (on one, the second would wait 600 s, beyond
// the interactive minute) and no stretch; MPS puts both on one card, where they take 960 s:
// slowdown 960 / 600 = 1.6. At 1 s and 30 s ticks.
class PlanMpsStretchTicks : public ::testing::TestWithParam<DurationUs> {};

TEST_P(PlanMpsStretchTicks, SharedCardSlowsBothUnits) {
    const DurationUs tick = GetParam();
    plan::DemandBuilder b(context(2, 2, 2, 2));
    for (TimeUs t = 0; t < 1200 * k_s; t += tick) {
        for (int g = 0; g < 2; ++g) {
            std::vector<Proc> ps;
            if (t < 600 * k_s) {
                ps.push_back(Proc{10 + g, static_cast<std::uint32_t>(g), 10240, 80, true});
            }
            b.add(card_tick(static_cast<std::uint32_t>(g), t, tick, ps), ids_of(ps));
        }
    }
    const plan::Demand d = b.finish(0, 1200 * k_s, std::nullopt);
    ASSERT_EQ(d.units.size(), 2U);
    plan::PlanOptions o;
    o.timeouts = {std::nullopt};
    o.shares = {plan::Share::exclusive, plan::Share::mps};
    const plan::PlanResult r = plan::run_plan(d, o);
    ASSERT_EQ(r.scenarios.size(), 2U);
    const plan::Scenario& exclusive = r.scenarios[0];
    EXPECT_EQ(exclusive.relaunch.gpus_needed, 2);
    EXPECT_EQ(exclusive.relaunch.mps_slowdown, 1.0);
    const plan::Scenario& mps = r.scenarios[1];
    EXPECT_EQ(mps.relaunch.gpus_needed, 1);
    EXPECT_EQ(mps.relaunch.concurrency.peak, 1);
    EXPECT_DOUBLE_EQ(mps.relaunch.mps_slowdown, shared_time(600, 160) / 600);
}

INSTANTIATE_TEST_SUITE_P(Ticks, PlanMpsStretchTicks, ::testing::Values(k_s, 30 * k_s));

} // namespace mps_stretch_test
} // namespace gua::plan_test

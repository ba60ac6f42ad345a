// SPDX-License-Identifier: Apache-2.0
// The plan on histories built by hand, whose answers the tests derive from the schedule: eight
// staggered notebooks under idle timeouts, a resumed session's drop/relaunch band, fourteen small
// holders under MIG and MPS, and a 4-GPU gang that is never split; at 1 s and 30 s ticks.
#include "plan/capacity.hpp"
#include "plan/place.hpp"
#include "plan/render.hpp"
#include "plan/sweep.hpp"
#include "plan_ticks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gua::plan_test {
namespace known_optima_test { // named after the file: unique in a unity batch

using plan::Share;

constexpr DurationUs k_h = k_us_per_hour;
constexpr DurationUs k_m = k_us_per_minute;

/// Feeds every card of `cards` for [0, end) in steps of `tick`; `procs(gpu, t)` lists what the
/// card holds at t.
template <class Procs>
plan::Demand record(plan::DemandContext ctx, int cards, TimeUs end, DurationUs tick, Procs procs,
                    std::function<std::optional<std::uint32_t>(int)> owner = {}) {
    plan::DemandBuilder b(std::move(ctx));
    for (TimeUs t = 0; t < end; t += tick) {
        for (int g = 0; g < cards; ++g) {
            const std::vector<Proc> ps = procs(g, t);
            const std::optional<std::uint32_t> a =
                owner && !ps.empty() ? owner(g) : std::optional<std::uint32_t>{};
            b.add(card_tick(static_cast<std::uint32_t>(g), t, tick, ps, a), ids_of(ps));
        }
    }
    return b.finish(0, end, std::nullopt);
}

const plan::Scenario& scenario(const plan::PlanResult& r, std::optional<DurationUs> t,
                               Share share) {
    for (const plan::Scenario& s : r.scenarios) {
        if (s.idle_timeout == t && s.share == share) {
            return s;
        }
    }
    throw std::runtime_error("no such scenario");
}

class KnownOptima : public ::testing::TestWithParam<DurationUs> {};

// Eight notebooks, one per card, opened an hour apart; each active its first hour, then held
// idle for seven. Under timeout T a session holds 1 h + T (it never resumes), so the cards
// needed are the most sessions holding at once: every wait would be at least half an hour,
// beyond the interactive objective of a minute.
TEST_P(KnownOptima, StaggeredNotebooksNeedTheOverlapOfTheirCutSessions) {
    const DurationUs tick = GetParam();
    auto procs = [](int g, TimeUs t) {
        const TimeUs start = g * k_h;
        if (t < start || t >= start + 8 * k_h) {
            return std::vector<Proc>{};
        }
        return std::vector<Proc>{
            Proc{100 + g, static_cast<std::uint32_t>(g), 4000, 30, t < start + k_h}};
    };
    const plan::Demand d = record(context(8, 8, 8, 8), 8, 16 * k_h, tick, procs);
    ASSERT_EQ(d.units.size(), 8U);
    plan::PlanOptions o;
    o.timeouts = {15 * k_m, 30 * k_m, 2 * k_h, std::nullopt};
    o.shares = {Share::exclusive};
    const plan::PlanResult r = plan::run_plan(d, o);
    for (const std::optional<DurationUs>& timeout : o.timeouts) {
        const DurationUs hold = timeout ? std::min(8 * k_h, k_h + *timeout) : 8 * k_h;
        int overlap = 0;
        for (int i = 0; i < 8; ++i) { // the overlap is largest at some session's start
            int n = 0;
            for (int j = 0; j < 8; ++j) {
                n += (j * k_h <= i * k_h && i * k_h < j * k_h + hold) ? 1 : 0;
            }
            overlap = std::max(overlap, n);
        }
        const plan::Scenario& s = scenario(r, timeout, Share::exclusive);
        EXPECT_EQ(s.relaunch.gpus_needed, overlap) << plan::timeout_label(timeout);
        EXPECT_EQ(s.drop.gpus_needed, overlap);
        EXPECT_EQ(s.relaunch.concurrency.peak, overlap);
        EXPECT_EQ(s.cuts.killed, timeout ? 8 : 0);
        EXPECT_EQ(s.cuts.resumed, 0);
        EXPECT_EQ(s.savings.gpus_released, 8 - overlap);
        EXPECT_EQ(s.relaunch.interactive.p95_us, 0);
    }
    EXPECT_EQ(scenario(r, 30 * k_m, Share::exclusive).relaunch.gpus_needed, 2);
    EXPECT_EQ(scenario(r, std::nullopt, Share::exclusive).relaunch.gpus_needed, 8);
}

// A notebook active [0, 1 h), idle until 3 h, active [3 h, 4 h); another starts at 3 h. At
// T = 30 m the first is cut at 1.5 h: dropped, it never comes back (one card is enough);
// relaunched, it holds again from 3 h beside the second (two cards).
TEST_P(KnownOptima, ResumedSessionOpensTheBand) {
    const DurationUs tick = GetParam();
    auto procs = [](int g, TimeUs t) {
        if (g == 0 && t < 4 * k_h) {
            return std::vector<Proc>{Proc{1, 0, 4000, 30, t < k_h || t >= 3 * k_h}};
        }
        if (g == 1 && t >= 3 * k_h && t < 4 * k_h) {
            return std::vector<Proc>{Proc{2, 1, 4000, 30, true}};
        }
        return std::vector<Proc>{};
    };
    const plan::Demand d = record(context(2, 8, 2, 2), 2, 6 * k_h, tick, procs);
    plan::PlanOptions o;
    o.timeouts = {30 * k_m};
    o.shares = {Share::exclusive};
    const plan::Scenario s = plan::run_plan(d, o).scenarios.front();
    EXPECT_EQ(s.drop.gpus_needed, 1);
    EXPECT_EQ(s.relaunch.gpus_needed, 2);
    EXPECT_EQ(s.cuts.killed, 1);
    EXPECT_EQ(s.cuts.resumed, 1);
    EXPECT_EQ(s.cuts.median_return_us, 3 * k_h - (k_h + 30 * k_m));
    // Relaunched: held [0, 1.5 h) and [3 h, 4 h + warm-up); the second [3 h, 4 h).
    EXPECT_EQ(s.relaunch.holds, 3);
    EXPECT_EQ(s.drop.holds, 2);
}

// Fourteen batch processes of 6 GiB and 5 % SM, each recorded alone on an 80 GB card, all busy
// for two hours. Exclusive: 14 cards. MIG: 6 GiB + 10 % fits 1g.10gb (one of the card's 7
// compute and 8 memory slices), 7 a card. MPS: the card less its 5 % reserve holds 12 of them.
TEST_P(KnownOptima, SmallHoldersPackUnderMigAndMps) {
    const DurationUs tick = GetParam();
    constexpr std::int64_t k_card_mib = 81920;
    constexpr std::int64_t k_unit_mib = 6144;
    auto procs = [](int g, TimeUs t) {
        return t < 2 * k_h ? std::vector<Proc>{Proc{200 + g, 0, k_unit_mib, 5, true}}
                           : std::vector<Proc>{};
    };
    const plan::Demand d = record(context(14, 8, 1, 0, k_card_mib), 14, 3 * k_h, tick, procs);
    plan::PlanOptions o;
    o.timeouts = {std::nullopt};
    const plan::PlanResult r = plan::run_plan(d, o);
    const int per_card_mig = std::min(7 / 1, 8 / 1);
    const auto per_card_mps = (k_card_mib - k_card_mib / 20) / k_unit_mib;
    const auto cards = [](std::int64_t per) { return static_cast<int>((14 + per - 1) / per); };
    EXPECT_EQ(scenario(r, std::nullopt, Share::exclusive).relaunch.gpus_needed, 14);
    const plan::Scenario& mig = scenario(r, std::nullopt, Share::mig);
    EXPECT_EQ(mig.relaunch.gpus_needed, cards(per_card_mig));
    EXPECT_EQ(mig.relaunch.gpus_needed, 2);
    EXPECT_EQ(mig.pools.front().mig_profiles.at("1g.10gb"), 14);
    const plan::Scenario& mps = scenario(r, std::nullopt, Share::mps);
    EXPECT_EQ(per_card_mps, 12);
    EXPECT_EQ(mps.relaunch.gpus_needed, cards(per_card_mps));
    EXPECT_EQ(mps.relaunch.concurrency.peak, 2);
    EXPECT_EQ(mps.relaunch.mps_slowdown, 1.0); // 12 × 5 % of SM: no stretch
}

// A Slurm job's four processes on the four cards of host 0 and two single-card processes on
// host 1, all busy for two hours: one gang of 4 and two units, six cards needed.
TEST_P(KnownOptima, GangIsOneUnitOfFourCards) {
    const DurationUs tick = GetParam();
    auto procs = [](int g, TimeUs t) {
        if (t >= 2 * k_h || g > 5) {
            return std::vector<Proc>{};
        }
        return std::vector<Proc>{
            Proc{10 + g, static_cast<std::uint32_t>(g < 4 ? 0 : g - 3), 20000, 80, true}};
    };
    plan::DemandContext ctx = context(8, 4, 3, 0);
    ctx.allocation_label = {"slurm-job 42"};
    const plan::Demand d = record(std::move(ctx), 8, 3 * k_h, tick, procs, [](int g) {
        return g < 4 ? std::optional<std::uint32_t>(0) : std::nullopt;
    });
    ASSERT_EQ(d.units.size(), 3U);
    EXPECT_EQ(d.units[0].kind, plan::UnitKind::gang);
    EXPECT_EQ(d.units[0].gpus, 4);
    EXPECT_EQ(d.pools.front().gpus_per_host, 4);
    plan::PlanOptions o;
    o.timeouts = {std::nullopt};
    o.shares = {Share::exclusive, Share::mig};
    const plan::PlanResult r = plan::run_plan(d, o);
    EXPECT_EQ(r.gangs, 1);
    EXPECT_EQ(scenario(r, std::nullopt, Share::exclusive).relaunch.gpus_needed, 6);
    EXPECT_EQ(scenario(r, std::nullopt, Share::mig).relaunch.gpus_needed, 6); // gangs take cards
}

INSTANTIATE_TEST_SUITE_P(Ticks, KnownOptima,
                         ::testing::Values(k_us_per_second, 30 * k_us_per_second));

// Two hosts of four cards. Four single-card units fill host 0 (best fit packs them), a fifth
// goes to host 1; two of host 0's end at 1 s. At 2 s a 4-card gang arrives: five cards are free
// but no host has four, so it waits for host 1 to empty at 10 s — it is never split.
TEST(PlanPlacement, GangWaitsForAWholeHostRatherThanSplit) {
    const plan::Capacity card{1, 1};
    auto single = [&](TimeUs at, DurationUs d) { return plan::Request{at, d, 1, card, false, 0}; };
    const DurationUs s = k_us_per_second;
    std::vector<plan::Request> reqs{single(0, s),      single(0, s),
                                    single(0, 10 * s), single(0, 10 * s),
                                    single(0, 10 * s), {2 * s, s, 4, card, false, 0}};
    const plan::Replay r = plan::replay(reqs, card, 8, 4, [](bool, DurationUs) { return false; });
    ASSERT_FALSE(r.stopped);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(r.waits[static_cast<std::size_t>(i)], 0);
    }
    EXPECT_EQ(r.waits[5], 10 * s - 2 * s);
}

// Strict FIFO: a unit behind a waiting one waits too, even when it would fit.
TEST(PlanPlacement, FifoHeadBlocksTheQueue) {
    const plan::Capacity card{1, 1};
    const DurationUs s = k_us_per_second;
    std::vector<plan::Request> reqs{
        {0, 5 * s, 1, card, false, 0}, {s, s, 2, card, false, 0}, {2 * s, s, 1, card, false, 0}};
    const plan::Replay r = plan::replay(reqs, card, 2, 2, [](bool, DurationUs) { return false; });
    EXPECT_EQ(r.waits[0], 0);
    EXPECT_EQ(r.waits[1], 4 * s); // needs both cards: starts at 5 s
    EXPECT_EQ(r.waits[2], 4 * s); // behind it, though one card was free
}

TEST(PlanCapacity, ConcurrencyIsWeightedByRecordedTimeOnly) {
    // 1 card for 90 s, 3 cards for 10 s, then 0; recorded [0, 100 s) and [200 s, 300 s).
    const DurationUs s = k_us_per_second;
    const std::vector<plan::Step> steps{{0, 1}, {90 * s, 3}, {100 * s, 0}};
    const std::vector<plan::Phase> recorded{{0, 100 * s, false}, {200 * s, 300 * s, false}};
    const plan::Concurrency c = plan::concurrency_of(steps, recorded);
    EXPECT_EQ(c.peak, 3);
    // 200 s recorded: 100 s at 0, 90 s at 1, 10 s at 3 → 95 % is reached at 1, 99 % at 3.
    EXPECT_EQ(c.p95, 1);
    EXPECT_EQ(c.p99, 3);
    const std::vector<plan::Phase> longer{{0, 100 * s, false}, {200 * s, 3000 * s, false}};
    EXPECT_EQ(plan::concurrency_of(steps, longer).p95, 0); // 2800 of 2900 s at 0
}

} // namespace known_optima_test
} // namespace gua::plan_test

// SPDX-License-Identifier: Apache-2.0
// The recommender's rules on hand-built evidence: each fires at its threshold and not below,
// speaks its remedy vocabulary, cites its numbers, and its savings combine without double counting.
#include "audit/recommend.hpp"
#include "audit/rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace gua::audit {
namespace recommend_test { // named after the file: unique in a unity batch

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double k_h = static_cast<double>(k_us_per_hour);

DurationUs hours(double h) {
    return static_cast<DurationUs>(h * k_h);
}

/// A card observed for `measured_h` hours, all of it active unless the test says otherwise.
CardEvidence card(int index, double measured_h, std::int64_t mem_mib = 81920,
                  std::int64_t price = 2 * k_micros_per_unit) {
    CardEvidence c;
    c.index = index;
    c.model = "NVIDIA A100-SXM4-80GB";
    c.memory_total_mib = mem_mib;
    c.micros_per_gpu_hour = price;
    c.states.active = hours(measured_h);
    c.profile.office_us = hours(measured_h);
    return c;
}

/// Moves `h` hours of the card's active time to idle-held (office hours, not bursty).
void hold(CardEvidence& c, double h, double held_mib) {
    c.states.active -= hours(h);
    c.states.idle_held += hours(h);
    c.pools[static_cast<std::size_t>(Pool::held_office)] += static_cast<double>(hours(h));
    c.profile.idle_held_mib_us += held_mib * static_cast<double>(hours(h));
}

/// Marks `h` hours of the card's time as steady active ticks at `util` % holding `held_mib`.
void steady(CardEvidence& c, double h, double util, double held_mib) {
    const auto us = static_cast<double>(hours(h));
    c.profile.steady_us += hours(h);
    if (util < 70) {
        c.profile.steady_under_us += hours(h);
        c.profile.steady_under_util_us += util * us;
        c.profile.steady_under_held_mib_us += held_mib * us;
        c.pools[static_cast<std::size_t>(Pool::headroom_under)] += us * (1 - util / 100);
    } else if (util >= 90) {
        c.profile.steady_compute_bound_us += hours(h);
        c.profile.steady_compute_bound_util_us += util * us;
        c.pools[static_cast<std::size_t>(Pool::compute_bound)] += us * util / 100;
        c.pools[static_cast<std::size_t>(Pool::headroom_busy)] += us * (1 - util / 100);
    }
}

/// Marks `h` hours as bursty active ticks (half at 0 %, half at 100 %).
void bursty(CardEvidence& c, double h) {
    c.profile.bursty_us += hours(h);
    c.profile.bursty_util_us += 50.0 * static_cast<double>(hours(h));
    c.profile.bursty_bucket_us = {hours(h / 2), 0, 0, hours(h / 2)};
    c.states.active -= hours(h / 2);
    c.states.idle_held += hours(h / 2);
    c.pools[static_cast<std::size_t>(Pool::stall)] += static_cast<double>(hours(h / 2));
}

std::vector<std::string> ids(const Advice& a) {
    std::vector<std::string> out;
    for (const Recommendation& r : a.recommendations) {
        out.push_back(r.id);
    }
    std::sort(out.begin(), out.end());
    return out;
}

const Recommendation& find(const Advice& a, const std::string& id) {
    for (const Recommendation& r : a.recommendations) {
        if (r.id == id) {
            return r;
        }
    }
    throw std::runtime_error("no recommendation " + id);
}

TEST(Recommend, NothingToSayAboutAnEmptyOrProductiveWindow) {
    EXPECT_TRUE(recommend(RecommendInput{}).recommendations.empty());
    RecommendInput in;
    in.cards.push_back(card(0, 10));
    steady(in.cards[0], 10, 80, 40000);
    const Advice a = recommend(in);
    EXPECT_TRUE(a.recommendations.empty());
    EXPECT_DOUBLE_EQ(a.combination.total, 0.0);
    EXPECT_EQ(a.savings_rate.hourly_cents, 0);
}

TEST(Recommend, IdleCullingFollowsThe20PercentRule) {
    RecommendInput in;
    for (int i = 0; i < 5; ++i) {
        in.cards.push_back(card(i, 10));
    }
    hold(in.cards[0], 4.0, 70000); // 4 of 50 card-hours: 8 %
    hold(in.cards[1], 4.0, 70000); // 16 %
    hold(in.cards[2], 1.9, 70000); // 19.8 %: within the rule, no card above half
    EXPECT_TRUE(ids(recommend(in)).empty());
    hold(in.cards[3], 0.2, 70000); // 20.2 %
    const Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("idle-culling"));
    const Recommendation& r = a.recommendations[0];
    EXPECT_THAT(r.evidence[0], HasSubstr("10.10 GPU-hours = 20.2 % of measured GPU time, above"));
    EXPECT_THAT(r.remedy, HasSubstr("cull_idle_timeout"));
    EXPECT_THAT(r.remedy, HasSubstr("gua's idle-held policy"));
    EXPECT_THAT(r.gpus, ElementsAre(0, 1, 2, 3));
    EXPECT_NEAR(r.addressed_gpu_hours, 10.1, 1e-9);
    EXPECT_EQ(r.addressed_cents, 2020);
    EXPECT_NEAR(r.recovery, rules::k_culling_recovery, 1e-12);
    // The baseline is the idle-held time alone here (no headroom pools): f = recovery.
    EXPECT_NEAR(r.fraction, 0.8, 1e-12);
}

TEST(Recommend, IdleCullingForOneCardHeldHalfItsTime) {
    RecommendInput in;
    for (int i = 0; i < 10; ++i) {
        in.cards.push_back(card(i, 10));
    }
    hold(in.cards[7], 5.0, 70000); // 5 % of the fleet, 50 % of card 7
    const Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("idle-culling"));
    EXPECT_THAT(a.recommendations[0].evidence[0], HasSubstr("5.0 % of measured GPU time, within"));
    EXPECT_THAT(a.recommendations[0].evidence[1], HasSubstr("GPU 7 (NVIDIA A100-SXM4-80GB): "
                                                            "idle-held 50.0 % of its time"));
}

TEST(Recommend, SharingWhenSmallHoldersSitOnBigCards) {
    RecommendInput in;
    in.cards = {card(0, 10), card(1, 10), card(2, 10)};
    hold(in.cards[0], 10, 8192);  // 10 % of the memory → 1 slice → capped at 0.75
    hold(in.cards[1], 10, 38000); // 46 % → 4 slices → 3/7
    hold(in.cards[2], 10, 50000); // 61 % → no sharing
    in.identities.push_back(IdentityEvidence{"bob", {0, 0, 0}, {10 * k_h, 0, 0}});
    in.identities.push_back(IdentityEvidence{"erin", {0, 0, 0}, {0, 10 * k_h, 0}});
    const Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("gpu-sharing", "idle-culling"));
    const Recommendation& s = find(a, "gpu-sharing");
    EXPECT_THAT(s.gpus, ElementsAre(0, 1));
    EXPECT_THAT(s.remedy, HasSubstr("MPS"));
    EXPECT_THAT(s.remedy, HasSubstr("MIG"));
    EXPECT_THAT(s.evidence[0], HasSubstr("kept 8.0 GiB of 80.0 GiB (10.0 %) — 1 of 7 MIG slices"));
    EXPECT_THAT(s.evidence[1], HasSubstr("4 of 7 MIG slices"));
    EXPECT_THAT(s.identities, ElementsAre("bob", "erin"));
    EXPECT_NEAR(s.fraction, (0.75 + 3.0 / 7.0) / 3.0, 1e-12);
    // Culling and sharing recover the same idle-held time: the combination counts the larger.
    ASSERT_EQ(a.combination.groups.size(), 1u);
    EXPECT_EQ(a.combination.groups[0].remedies, 2u);
    EXPECT_NEAR(a.combination.total, 0.8, 1e-12);
    EXPECT_EQ(a.recommendations[0].id, "idle-culling"); // ranked by fraction
}

CardEvidence day_and_night(int index, double office_waste_share, double off_waste_share) {
    CardEvidence c = card(index, 0);
    c.profile.office_us = hours(45);
    c.profile.off_hours_us = hours(123);
    c.states.active = hours(45 * (1 - office_waste_share) + 123 * (1 - off_waste_share));
    c.states.truly_idle = hours(45 * office_waste_share + 123 * off_waste_share);
    c.pools[static_cast<std::size_t>(Pool::idle_office)] =
        static_cast<double>(hours(45 * office_waste_share));
    c.pools[static_cast<std::size_t>(Pool::idle_off_hours)] =
        static_cast<double>(hours(123 * off_waste_share));
    return c;
}

TEST(Recommend, OffHoursNeedsAWholeDayAndAClearNightPattern) {
    RecommendInput in;
    in.spot_discount = 0.6;
    in.cards = {day_and_night(0, 0.3, 0.9)};
    in.recorded_us = hours(23.9);
    EXPECT_TRUE(ids(recommend(in)).empty());
    in.recorded_us = hours(168);
    Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("off-hours"));
    const Recommendation& r = a.recommendations[0];
    EXPECT_THAT(r.evidence[0], HasSubstr("90.0 % of 123.00 card-hours wasted"));
    EXPECT_THAT(r.evidence[0], HasSubstr("against 30.0 % in office hours"));
    EXPECT_THAT(r.remedy, HasSubstr("scale-down"));
    EXPECT_THAT(r.remedy, HasSubstr("spot/preemptible instances (60 % off"));
    const double off = 123 * 0.9;
    const double baseline = off + 45 * 0.3;
    EXPECT_NEAR(r.fraction, 0.75 * off / baseline, 1e-9);
    EXPECT_NEAR(r.rate_reduction, 0.6 * 0.25 * off / baseline, 1e-9);
    EXPECT_NEAR(a.combination.total,
                1 - (1 - 0.75 * off / baseline) * (1 - 0.6 * 0.25 * off / baseline), 1e-9);
    // Waste that is the same day and night is not a schedule problem.
    in.cards = {day_and_night(0, 0.45, 0.6)};
    EXPECT_TRUE(ids(recommend(in)).empty());
    in.cards = {day_and_night(0, 0.1, 0.49)};
    EXPECT_TRUE(ids(recommend(in)).empty());
}

TEST(Recommend, DataLoaderOnBurstyUnderutilizedCards) {
    RecommendInput in;
    in.cards = {card(0, 10), card(1, 10)};
    bursty(in.cards[0], 10);
    steady(in.cards[1], 10, 80, 30000);
    Advice a = recommend(in);
    // The card's idle-held half is stall inside bursty ticks: no culling recommendation.
    ASSERT_THAT(ids(a), ElementsAre("data-loader"));
    const Recommendation& r = a.recommendations[0];
    EXPECT_THAT(r.gpus, ElementsAre(0));
    EXPECT_THAT(r.remedy, HasSubstr("num_workers"));
    EXPECT_THAT(r.remedy, HasSubstr("pin_memory"));
    EXPECT_THAT(r.remedy, HasSubstr("DALI"));
    EXPECT_THAT(r.evidence[0], HasSubstr("100.0 % of its active card-ticks bursty — 50.0 % of that "
                                         "time below 10 % SM and 50.0 % at 90 % or more"));
    EXPECT_THAT(r.evidence[1], HasSubstr("is this stall, not an abandoned session"));
    EXPECT_NEAR(r.fraction, rules::k_dataloader_recovery * 5.0 / (5.0 + 10 * 0.0), 1e-9);
}

TEST(Recommend, EfficiencyRulesNeedRealWorkOnTheCard) {
    RecommendInput in;
    in.cards = {card(0, 100)};
    in.cards[0].states.active = hours(9);
    in.cards[0].states.truly_idle = hours(91);
    in.cards[0].pools[static_cast<std::size_t>(Pool::idle_office)] = static_cast<double>(hours(91));
    steady(in.cards[0], 9, 40, 1000); // 9 % of its time: too little to characterise
    EXPECT_TRUE(ids(recommend(in)).empty());
    steady(in.cards[0], 1.5, 40, 1000);
    EXPECT_THAT(ids(recommend(in)), ElementsAre("larger-batches"));
}

TEST(Recommend, LargerBatchesWithFreeMemoryCheckpointingWhenFull) {
    RecommendInput in;
    in.cards = {card(0, 10), card(1, 10), card(2, 10, 0)};
    in.cards[2].memory_total_mib.reset();
    steady(in.cards[0], 10, 40, 0.89 * 81920);
    steady(in.cards[1], 10, 30, 0.91 * 81920);
    steady(in.cards[2], 10, 40, 5000);
    const Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("larger-batches", "memory-bound"));
    const Recommendation& batch = find(a, "larger-batches");
    const Recommendation& memory = find(a, "memory-bound");
    EXPECT_THAT(batch.gpus, ElementsAre(0, 2));
    EXPECT_THAT(memory.gpus, ElementsAre(1));
    EXPECT_THAT(batch.remedy, HasSubstr("larger batches"));
    EXPECT_THAT(batch.remedy, HasSubstr("mixed precision"));
    EXPECT_THAT(batch.remedy, HasSubstr("smaller GPU SKU"));
    EXPECT_THAT(memory.remedy, HasSubstr("gradient checkpointing"));
    EXPECT_THAT(memory.remedy, HasSubstr("gradient accumulation"));
    EXPECT_THAT(batch.evidence[0], HasSubstr("steady at a mean 40.0 % SM"));
    EXPECT_THAT(memory.evidence[0], HasSubstr("holding 72.8 GiB of 80.0 GiB (91.0 %)"));
    EXPECT_THAT(batch.evidence[1], HasSubstr("memory use unknown"));
    // Different cards: independent groups, combined as 1 − (1 − a)(1 − b).
    ASSERT_EQ(a.combination.groups.size(), 2u);
    EXPECT_NEAR(a.combination.total, 1 - (1 - batch.fraction) * (1 - memory.fraction), 1e-12);
    EXPECT_LT(a.combination.total, batch.fraction + memory.fraction);
}

TEST(Recommend, ComputeBoundCards) {
    RecommendInput in;
    in.cards = {card(0, 10, 81559, 4 * k_micros_per_unit)};
    in.cards[0].model = "NVIDIA H100 80GB HBM3";
    steady(in.cards[0], 4.9, 95, 52000);
    steady(in.cards[0], 5.1, 80, 52000);
    EXPECT_TRUE(ids(recommend(in)).empty()); // 49 % of its active time
    in.cards = {card(0, 10, 81559, 4 * k_micros_per_unit)};
    steady(in.cards[0], 10, 95, 52000);
    const Advice a = recommend(in);
    ASSERT_THAT(ids(a), ElementsAre("compute-bound"));
    const Recommendation& r = a.recommendations[0];
    for (const char* word : {"AMP", "BF16", "FP8", "Tensor Cores", "fused"}) {
        EXPECT_THAT(r.remedy, HasSubstr(word));
    }
    EXPECT_THAT(r.evidence[0], HasSubstr("100.0 % of its active time steady at 90 % SM or more "
                                         "(mean 95.0 %), 10.00 GPU-hours compute-bound"));
    EXPECT_EQ(r.addressed_cents, 3800); // 9.5 busy hours at $4.00
    EXPECT_NEAR(r.fraction, 0.3 * 9.5 / 10.0, 1e-9);
}

TEST(Recommend, BaselineRunRateAndSavingsAreConsistentToTheCent) {
    RecommendInput in;
    in.cards = {card(0, 10, 81920, 2'456'789), card(1, 20, 81920, 3'333'333)};
    hold(in.cards[0], 7, 8000);
    hold(in.cards[1], 3, 70000);
    const Advice a = recommend(in);
    // Baseline per hour: 2.456789 × 0.7 + 3.333333 × 0.15 = 2.2197522…  → 222 cents.
    EXPECT_EQ(a.baseline_rate.hourly_cents, 222);
    EXPECT_EQ(a.baseline_rate.monthly_cents(), 222 * 720);
    EXPECT_EQ(a.savings_rate.monthly_cents(), a.savings_rate.hourly_cents * 720);
    EXPECT_EQ(a.savings_rate.yearly_cents(), a.savings_rate.hourly_cents * 8760);
    EXPECT_LE(a.savings_rate.hourly_cents, a.baseline_rate.hourly_cents);
    EXPECT_EQ(a.baseline_cents, a.pool_cents[0]);
    EXPECT_EQ(a.pool_cents[0], 1720 + 1000); // 7 h × $2.456789, 3 h × $3.333333
    EXPECT_LE(a.combination.savings, a.combination.baseline);
}

} // namespace recommend_test
} // namespace gua::audit

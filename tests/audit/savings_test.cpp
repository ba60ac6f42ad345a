// SPDX-License-Identifier: Apache-2.0
// Savings combination: 1 − Π(1 − f), overlapping remedies once, capped, spot multiplicative.
#include "audit/savings.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace gua::audit {
namespace {

TEST(Savings, IndependentRemediesCombineAsOneMinusProductNeverSum) {
    EXPECT_DOUBLE_EQ(combine_independent({}), 0.0);
    EXPECT_DOUBLE_EQ(combine_independent({0.3}), 0.3);
    EXPECT_DOUBLE_EQ(combine_independent({0.5, 0.5}), 0.75);
    EXPECT_NEAR(combine_independent({0.6, 0.5, 0.4}), 1 - 0.4 * 0.5 * 0.6, 1e-12);
    EXPECT_DOUBLE_EQ(combine_independent({0.7, 0.8}), 1 - 0.3 * 0.2); // the sum would be 150 %
    EXPECT_DOUBLE_EQ(combine_independent({1.5, -0.2}), 1.0);          // clamped
}

TEST(Savings, SpotComposesMultiplicatively) {
    EXPECT_DOUBLE_EQ(compose_rate(0.5, 0.6), 1 - 0.5 * 0.4);
    EXPECT_DOUBLE_EQ(compose_rate(0.0, 0.6), 0.6);
    EXPECT_DOUBLE_EQ(compose_rate(0.4, 0.0), 0.4);
    EXPECT_DOUBLE_EQ(compose_rate(1.0, 0.6), 1.0);
    const Combination c = combine({{"idle-held", 0.5, 0}, {"off-hours", 0.2, 0.3}}, 1000);
    EXPECT_DOUBLE_EQ(c.utilization, 1 - 0.5 * 0.8);
    EXPECT_DOUBLE_EQ(c.rate_reduction, 0.3);
    EXPECT_DOUBLE_EQ(c.total, 1 - (1 - 0.6) * (1 - 0.3));
    EXPECT_DOUBLE_EQ(c.savings, c.total * 1000);
}

TEST(Savings, OverlappingRemediesCountOnce) {
    // Culling (0.42) and MPS/MIG (0.28) recover the same idle-held time: only the larger counts.
    const Combination overlap = combine({{"idle-held", 0.42, 0}, {"idle-held", 0.28, 0}}, 100);
    ASSERT_EQ(overlap.groups.size(), 1u);
    EXPECT_EQ(overlap.groups[0].remedies, 2u);
    EXPECT_DOUBLE_EQ(overlap.total, 0.42);
    // DALI on the stall pool is independent of both.
    const Combination three =
        combine({{"idle-held", 0.42, 0}, {"stall", 0.3, 0}, {"idle-held", 0.28, 0}}, 100);
    ASSERT_EQ(three.groups.size(), 2u);
    EXPECT_EQ(three.groups[0].group, "idle-held");
    EXPECT_DOUBLE_EQ(three.total, 1 - 0.58 * 0.7);
    EXPECT_DOUBLE_EQ(three.savings, 100 * (1 - 0.58 * 0.7));
}

TEST(Savings, FractionOfOneRemedyCountsARepeatedClaimOnce) {
    const PoolValues values{{100, 0, 0, 0, 50, 0, 0, 0}, {0, 0, 50, 0, 0, 0, 0, 0}};
    EXPECT_DOUBLE_EQ(baseline_of(values), 200);
    EXPECT_DOUBLE_EQ(savings_fraction(values, {{0, Pool::held_office, 0.8}}), 0.4);
    EXPECT_DOUBLE_EQ(savings_fraction(values, {{0, Pool::held_office, 0.8},
                                               {0, Pool::held_office, 0.5},
                                               {1, Pool::idle_office, 1.0}}),
                     (80.0 + 50.0) / 200.0);
    EXPECT_DOUBLE_EQ(savings_fraction(values, {{5, Pool::held_office, 1.0}}), 0.0);
    EXPECT_DOUBLE_EQ(savings_fraction({}, {{0, Pool::held_office, 1.0}}), 0.0);
}

TEST(Savings, ClampsAndFlagsFractionsBeyondTheBaseline) {
    const Combination c = combine({{"a", 1.7, 0}, {"b", 0.2, 1.4}}, 50);
    EXPECT_TRUE(c.capped);
    EXPECT_DOUBLE_EQ(c.total, 1.0);
    EXPECT_DOUBLE_EQ(c.savings, 50.0);
}

RC_GTEST_PROP(Savings, NeverAbove100PercentNorTheMeasuredWaste, ()) {
    const auto n = *rc::gen::inRange<std::size_t>(0, 9);
    std::vector<Remedy> remedies;
    for (std::size_t i = 0; i < n; ++i) {
        remedies.push_back(Remedy{std::string(1, static_cast<char>('a' + *rc::gen::inRange(0, 4))),
                                  *rc::gen::inRange(-200, 300) / 100.0,
                                  *rc::gen::inRange(-50, 150) / 100.0});
    }
    const double baseline = *rc::gen::inRange(0, 1'000'000) / 3.0;
    const Combination c = combine(remedies, baseline);
    RC_ASSERT(c.total >= 0.0);
    RC_ASSERT(c.total <= 1.0);
    RC_ASSERT(c.savings <= baseline);
    RC_ASSERT(c.savings >= 0.0);
    double sum = 0;
    for (const GroupFactor& g : c.groups) {
        RC_ASSERT(g.fraction >= 0.0 && g.fraction <= 1.0);
        sum += g.fraction;
    }
    RC_ASSERT(c.utilization <= sum + 1e-12); // never more than the sum of its parts
}

RC_GTEST_PROP(Savings, RemedyFractionsStayWithinTheBaseline, ()) {
    const auto cards = *rc::gen::inRange<std::size_t>(1, 5);
    PoolValues values(cards);
    for (auto& card : values) {
        for (double& v : card) {
            v = *rc::gen::inRange(0, 100'000) / 7.0;
        }
    }
    std::vector<Claim> claims;
    const auto n = *rc::gen::inRange<std::size_t>(0, 20);
    for (std::size_t i = 0; i < n; ++i) {
        claims.push_back(Claim{*rc::gen::inRange<std::size_t>(0, cards + 1),
                               static_cast<Pool>(*rc::gen::inRange(0, 8)),
                               *rc::gen::inRange(0, 120) / 100.0});
    }
    const double f = savings_fraction(values, claims);
    RC_ASSERT(f >= 0.0);
    RC_ASSERT(f <= 1.0);
}

} // namespace
} // namespace gua::audit

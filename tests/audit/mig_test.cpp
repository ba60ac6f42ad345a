// SPDX-License-Identifier: Apache-2.0
// MIG instances as fractions of their parent card: profile slices, memory fallback and prices.
#include "audit/mig.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gua::audit {
namespace {

CardFacts mig(std::string name, std::optional<std::int64_t> mib = std::nullopt,
              std::string parent_name = "", std::optional<std::int64_t> parent_mib = std::nullopt) {
    return CardFacts{"MIG-1234",   std::move(name),        mib,
                     "GPU-parent", std::move(parent_name), parent_mib};
}

TEST(Mig, ProfileSlicesFromTheInstanceName) {
    EXPECT_EQ(mig_profile_slices("NVIDIA A100-SXM4-80GB MIG 3g.40gb"), 3);
    EXPECT_EQ(mig_profile_slices("MIG 1g.10gb"), 1);
    EXPECT_EQ(mig_profile_slices("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me"), 1);
    EXPECT_EQ(mig_profile_slices("NVIDIA A100-SXM4-80GB"), std::nullopt);
    EXPECT_EQ(mig_profile_slices("MIG instance"), std::nullopt);
}

TEST(Mig, CardSlices) {
    EXPECT_EQ(mig_card_slices("NVIDIA A100-SXM4-80GB"), 7);
    EXPECT_EQ(mig_card_slices("NVIDIA H100 80GB HBM3"), 7);
    EXPECT_EQ(mig_card_slices("NVIDIA A30"), 4);
}

TEST(Mig, FractionIsProfileSlicesOverCardSlices) {
    EXPECT_DOUBLE_EQ(card_fraction(mig("NVIDIA A100-SXM4-80GB MIG 3g.40gb")), 3.0 / 7.0);
    EXPECT_DOUBLE_EQ(card_fraction(mig("NVIDIA A30 MIG 2g.12gb")), 2.0 / 4.0);
    // The parent's recorded name decides the card's slices.
    EXPECT_DOUBLE_EQ(card_fraction(mig("MIG 1g.6gb", std::nullopt, "NVIDIA A30")), 1.0 / 4.0);
    // A physical card is a whole card.
    EXPECT_DOUBLE_EQ(card_fraction(CardFacts{"GPU-1", "NVIDIA A100", 81920, "", "", {}}), 1.0);
}

TEST(Mig, FractionFallsBackToMemoryThenToTheWholeCard) {
    EXPECT_DOUBLE_EQ(card_fraction(mig("MIG instance", 20480, "NVIDIA A100", 81920)), 0.25);
    EXPECT_DOUBLE_EQ(card_fraction(mig("MIG instance", 20480)), 1.0);
}

TEST(Mig, PriceIsTheParentsPriceTimesTheFraction) {
    Pricing pricing; // built-in: A100 $2, H100 $4, else $1
    const CardPrice p = card_price(pricing, mig("NVIDIA A100-SXM4-80GB MIG 3g.40gb"));
    EXPECT_EQ(p.micros_per_gpu_hour, std::llround(2.0 * k_micros_per_unit * 3.0 / 7.0));
    EXPECT_DOUBLE_EQ(p.fraction, 3.0 / 7.0);
    EXPECT_FALSE(p.rule.empty());
    // Unknown parent model: the default price × 1/7.
    EXPECT_EQ(card_price(pricing, mig("MIG 1g.10gb")).micros_per_gpu_hour,
              std::llround(1.0 * k_micros_per_unit / 7.0));
    // --price is a whole GPU's price.
    pricing.override_micros_per_gpu_hour = 7 * k_micros_per_unit;
    EXPECT_EQ(card_price(pricing, mig("MIG 2g.20gb")).micros_per_gpu_hour, 2 * k_micros_per_unit);
}

TEST(Mig, AConfiguredRowNamingTheInstanceWins) {
    Pricing pricing;
    pricing.models.insert(pricing.models.begin(), ModelPrice{"3g.40gb", 900'000});
    const CardPrice p = card_price(pricing, mig("NVIDIA A100-SXM4-80GB MIG 3g.40gb"));
    EXPECT_EQ(p.micros_per_gpu_hour, 900'000);
    EXPECT_DOUBLE_EQ(p.fraction, 1.0);
    // A row matching the parent model ("A100") is the parent's price, not the instance's.
    EXPECT_EQ(card_price(pricing, mig("NVIDIA A100-SXM4-80GB MIG 1g.10gb")).micros_per_gpu_hour,
              std::llround(2.0 * k_micros_per_unit / 7.0));
}

} // namespace
} // namespace gua::audit

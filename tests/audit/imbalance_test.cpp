// SPDX-License-Identifier: Apache-2.0
// Imbalance: the busiest and idlest of an identity's cards by active share, cards held briefly
// left out.
#include "audit/imbalance.hpp"

#include <gtest/gtest.h>

namespace gua::audit {
namespace imbalance_test { // named after the file: unique in a unity batch

TEST(Imbalance, ComparesTheActiveSharesOfTheCardsHeld) {
    const DurationUs h = k_us_per_hour;
    EXPECT_EQ(imbalance({{0, h, 0}}, k_imbalance_min_us), std::nullopt) << "one card";
    EXPECT_EQ(imbalance({{0, h, 0}, {1, 1, 0}}, k_imbalance_min_us), std::nullopt)
        << "a card held for a microsecond does not count";
    const std::optional<Imbalance> s =
        imbalance({{0, h, 0}, {1, h / 4, 3 * h / 4}, {2, h / 2, h / 2}}, k_imbalance_min_us);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->busiest_gpu, 0);
    EXPECT_DOUBLE_EQ(s->busiest_share, 1.0);
    EXPECT_EQ(s->idlest_gpu, 1);
    EXPECT_DOUBLE_EQ(s->idlest_share, 0.25);
}

} // namespace imbalance_test
} // namespace gua::audit

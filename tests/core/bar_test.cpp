// SPDX-License-Identifier: Apache-2.0
// Proportional bars: the one cell algorithm of `gua report`'s headline and `gua now`/`top`'s bars.
#include "core/bar.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace gua::bar_test { // named after the file: unique in a unity batch

using Cells = std::vector<int>;

int total(const Cells& c) {
    return std::accumulate(c.begin(), c.end(), 0);
}

TEST(BarCells, ExactSharesGetExactCells) {
    // 50 % / 25 % / 25 % of 20 cells: 10, 5, 5 with nothing to round.
    EXPECT_EQ(bar_cells(std::array<double, 3>{0.5, 0.25, 0.25}, 20), (Cells{10, 5, 5}));
}

TEST(BarCells, LargestRemainderFillsTheWidth) {
    // 1/3 each of 10 cells: 3.33 each, floors 3+3+3 = 9; the one left over goes to the first of
    // the equal remainders.
    const double third = 1.0 / 3.0;
    EXPECT_EQ(bar_cells(std::array<double, 3>{third, third, third}, 10), (Cells{4, 3, 3}));
    // 0.46 / 0.27 / 0.27 of 10 cells: 4.6, 2.7, 2.7 → floors 4, 2, 2 (8); remainders .6, .7,
    // .7: the two cells left go to the second and third.
    EXPECT_EQ(bar_cells(std::array<double, 3>{0.46, 0.27, 0.27}, 10), (Cells{4, 3, 3}));
}

TEST(BarCells, ANonZeroShareIsNeverHidden) {
    // 0.4 % idle-held of a 40-cell bar is 0.16 cells: largest remainder alone gives it none
    // (99.6 % → 39.84 takes the spare cell). It takes one cell from the largest share instead,
    // so `gua now` shows what `gua report` shows.
    EXPECT_EQ(bar_cells(std::array<double, 3>{0.996, 0.004, 0.0}, 40), (Cells{39, 1, 0}));
    // Four shares, three of them tiny, on a four-cell bar: each gets its cell.
    EXPECT_EQ(bar_cells(std::array<double, 4>{0.97, 0.01, 0.01, 0.01}, 4), (Cells{1, 1, 1, 1}));
}

TEST(BarCells, ABarNarrowerThanItsSharesOnlyRounds) {
    // Two cells for three non-zero shares: not every share can show; the width still holds.
    const auto c = bar_cells(std::array<double, 3>{0.5, 0.3, 0.2}, 2);
    EXPECT_EQ(total(c), 2);
    EXPECT_EQ(c, (Cells{1, 1, 0}));
}

TEST(BarCells, SharesAreNormalisedByTheirSum) {
    // Hours instead of fractions: 6 h and 2 h of 8 cells are 6 and 2 cells.
    EXPECT_EQ(bar_cells(std::array<double, 2>{6.0, 2.0}, 8), (Cells{6, 2}));
}

TEST(BarCells, NothingMeasuredOrNoWidthDrawsNothing) {
    EXPECT_EQ(bar_cells(std::array<double, 3>{0, 0, 0}, 10), (Cells{0, 0, 0}));
    EXPECT_EQ(bar_cells(std::array<double, 3>{0.5, 0.5, 0}, 0), (Cells{0, 0, 0}));
    EXPECT_EQ(bar_cells(std::array<double, 3>{0.5, 0.5, 0}, -3), (Cells{0, 0, 0}));
}

TEST(BarCells, ANegativeOrNonFiniteShareDrawsNothing) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(bar_cells(std::array<double, 2>{nan, 0.5}, 10), (Cells{0, 0}));
    EXPECT_EQ(bar_cells(std::array<double, 2>{inf, 0.5}, 10), (Cells{0, 0}));
    EXPECT_EQ(bar_cells(std::array<double, 2>{-0.1, 1.1}, 10), (Cells{0, 0}));
}

TEST(BarCells, EveryMeasuredBarIsExactlyTheWidth) {
    // Sweep shares in steps of 1/97 over widths 1–120: the cells always add up to the width and
    // no share is off its exact value by a cell or more unless it was lifted from zero or gave a
    // cell to one that was.
    for (int width = 1; width <= 120; ++width) {
        for (int a = 0; a <= 97; a += 7) {
            for (int b = 0; a + b <= 97; b += 5) {
                const std::array<double, 3> s{a / 97.0, b / 97.0, (97 - a - b) / 97.0};
                const auto c = bar_cells(s, width);
                ASSERT_EQ(total(c), width) << "width " << width << " a " << a << " b " << b;
                int lifted = 0;
                for (std::size_t i = 0; i < 3; ++i) {
                    lifted += (s[i] > 0 && s[i] * width < 1 && width >= 3) ? 1 : 0;
                }
                for (std::size_t i = 0; i < 3; ++i) {
                    EXPECT_LE(std::fabs(c[i] - s[i] * width), 1.0 + lifted)
                        << "width " << width << " a " << a << " b " << b << " share " << i;
                }
            }
        }
    }
}

TEST(Repeat, RepeatsMultiByteGlyphs) {
    EXPECT_EQ(repeat("█", 3), "███");
    EXPECT_EQ(repeat("x", 0), "");
    EXPECT_EQ(repeat("x", -2), "");
}

} // namespace gua::bar_test

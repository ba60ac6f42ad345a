// SPDX-License-Identifier: Apache-2.0
// Sizes in one unit system: IEC binary units (powers of 1024) with one decimal.
#include "core/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace gua::units_test { // named after the file: unique in a unity batch

constexpr std::uint64_t k_kib = 1024;
constexpr std::uint64_t k_mib = 1024 * k_kib;
constexpr std::uint64_t k_gib = 1024 * k_mib;
constexpr std::uint64_t k_tib = 1024 * k_gib;

TEST(FormatBytes, WholeBytesBelowOneKibibyte) {
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1), "1 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
}

TEST(FormatBytes, PowersOf1024WithOneDecimal) {
    EXPECT_EQ(format_bytes(k_kib), "1.0 KiB");
    EXPECT_EQ(format_bytes(3 * k_kib / 2), "1.5 KiB");
    // 127,078 B = 124.0996 KiB (the status line of a small database).
    EXPECT_EQ(format_bytes(127078), "124.1 KiB");
    // 6,600,000 B = 6.294 MiB, not "6.6 MB".
    EXPECT_EQ(format_bytes(6600000), "6.3 MiB");
    EXPECT_EQ(format_bytes(5 * k_gib), "5.0 GiB");
    EXPECT_EQ(format_bytes(3 * k_tib + k_tib / 2), "3.5 TiB");
}

TEST(FormatBytes, AValueThatRoundsTo1024TakesTheNextUnit) {
    // 1,048,575 B = 1023.999 KiB, which would print as "1024.0 KiB".
    EXPECT_EQ(format_bytes(k_mib - 1), "1.0 MiB");
    // 1023.94 KiB still prints in KiB.
    EXPECT_EQ(format_bytes(1023 * k_kib + 962), "1023.9 KiB");
    EXPECT_EQ(format_bytes(k_gib - 1), "1.0 GiB");
}

TEST(FormatBytes, TebibytesAreTheLargestUnit) {
    EXPECT_EQ(format_bytes(2048 * k_tib), "2048.0 TiB");
}

TEST(FormatGib, MebibytesAsGibibytesWhateverTheSize) {
    EXPECT_EQ(format_gib(81920.0), "80.0 GiB");
    EXPECT_EQ(format_gib(512.0), "0.5 GiB");
    EXPECT_EQ(format_gib(8294.4), "8.1 GiB");
    EXPECT_EQ(format_gib(0.0), "0.0 GiB");
}

TEST(FormatHours, DecimalsEnoughToBeNonZeroOnShortWindows) {
    EXPECT_EQ(format_hours(1234.4), "1234");
    EXPECT_EQ(format_hours(1000.0), "1000");
    EXPECT_EQ(format_hours(999.994), "999.99");
    EXPECT_EQ(format_hours(12.5), "12.50");
    EXPECT_EQ(format_hours(0.1), "0.10");
    EXPECT_EQ(format_hours(0.0), "0.00");
    EXPECT_EQ(format_hours(30.0 / 3600), "0.0083"); // 30 s
    EXPECT_EQ(format_hours(12.0 / 3600), "0.0033"); // 12 s
}

} // namespace gua::units_test

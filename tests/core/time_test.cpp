// SPDX-License-Identifier: Apache-2.0
// ISO 8601 parsing and formatting of UTC microsecond timestamps.
#include "core/time.hpp"

#include <gtest/gtest.h>

namespace gua {
namespace {

TEST(Iso8601, ParsesCommonForms) {
    const TimeUs base = 1778486400LL * k_us_per_second; // 2026-05-11T08:00:00Z
    EXPECT_EQ(parse_iso8601("2026-05-11T08:00:00Z").value(), base);
    EXPECT_EQ(parse_iso8601("2026-05-11T08:00").value(), base);
    EXPECT_EQ(parse_iso8601("2026-05-11 08:00:00").value(), base);
    EXPECT_EQ(parse_iso8601("2026-05-11T10:00:00+02:00").value(), base);
    EXPECT_EQ(parse_iso8601("2026-05-11T08:00:00.701079+00:00").value(), base + 701079);
    EXPECT_EQ(parse_iso8601("2026-05-11").value(), base - 8 * k_us_per_hour);
    EXPECT_EQ(parse_iso8601("2026-05-11T21:59:00+13:59").value(), base);
}

TEST(Iso8601, RejectsNonsense) {
    for (const char* bad : {"", "2026", "2026-13-01", "2026-02-30", "2026-05-11T25:00", "yesterday",
                            "2026-05-11T08:00:00Q", "2026-05-11T08:00:00+25:00",
                            "2026-05-11T08:00:00+02:60", "2026-05-11T08:00:00-24:00"}) {
        EXPECT_FALSE(parse_iso8601(bad).ok()) << bad;
    }
}

TEST(Iso8601, FormatsRoundTrip) {
    EXPECT_EQ(format_iso8601(1778486400LL * k_us_per_second + 5), "2026-05-11T08:00:00Z");
    EXPECT_EQ(parse_iso8601(format_iso8601(0)).value(), 0);
}

} // namespace
} // namespace gua

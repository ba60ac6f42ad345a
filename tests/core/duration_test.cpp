// SPDX-License-Identifier: Apache-2.0
// Duration parsing (flags like --since) and formatting.
#include "core/duration.hpp"

#include <gtest/gtest.h>

namespace gua {
namespace {

TEST(ParseDuration, AcceptsEveryUnit) {
    EXPECT_EQ(parse_duration("200ms").value(), 200 * k_us_per_ms);
    EXPECT_EQ(parse_duration("30s").value(), 30 * k_us_per_second);
    EXPECT_EQ(parse_duration("5m").value(), 5 * k_us_per_minute);
    EXPECT_EQ(parse_duration("1.5h").value(), 90 * k_us_per_minute);
    EXPECT_EQ(parse_duration("7d").value(), 7 * k_us_per_day);
    EXPECT_EQ(parse_duration("2w").value(), 14 * k_us_per_day);
    EXPECT_EQ(parse_duration("0.5m").value(), 30 * k_us_per_second);
    EXPECT_EQ(parse_duration("365d").value(), 365 * k_us_per_day);
}

TEST(ParseDuration, RejectsWhatThePriorArtRejects) {
    for (const char* bad : {"30", "h", "1y", "1.5", "1 s", "", " 1s", "-1s", "1s ", "0s", "1.s",
                            ".5s", "s30", "1e3s", "99999999999999999999d"}) {
        const auto r = parse_duration(bad);
        EXPECT_FALSE(r.ok()) << "accepted '" << bad << "'";
        if (!r.ok()) {
            EXPECT_NE(r.error().message.find("invalid duration"), std::string::npos);
        }
    }
}

// Found by fuzz_time: nine fraction digits times the microseconds of a day or a week overflowed
// 64 bits (undefined behaviour) before the division. Each value is floor(fraction × unit).
TEST(ParseDuration, LongFractionsOfLargeUnitsAreExact) {
    EXPECT_EQ(parse_duration("1.5026721025d").value(), 129830869612); // 1.502672102 × 86400e6
    EXPECT_EQ(parse_duration("0.999999999w").value(), 604799999395);  // 0.999999999 × 604800e6
    EXPECT_EQ(parse_duration("0.000000001w").value(), 604);
    EXPECT_EQ(parse_duration("1.123456789h").value(), 4044444440); // 1.123456789 × 3600e6
}

TEST(FormatDuration, IsCompactAndExact) {
    EXPECT_EQ(format_duration(500 * k_us_per_ms), "500ms");
    EXPECT_EQ(format_duration(30 * k_us_per_second), "30s");
    EXPECT_EQ(format_duration(90 * k_us_per_minute), "1h30m");
    EXPECT_EQ(format_duration(2 * k_us_per_day + 4 * k_us_per_hour), "2d4h");
    EXPECT_EQ(format_duration(21 * k_us_per_day), "3w");
    EXPECT_EQ(format_duration(5 * k_us_per_minute), "5m");
}

} // namespace
} // namespace gua

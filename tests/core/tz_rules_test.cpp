// SPDX-License-Identifier: Apache-2.0
// Time zone rules read from the tz database agree with the C library's localtime_r at random
// instants from 1900 to 2100 (the footer rule beyond the last transition included); POSIX rules
// switch at the hand-computed instants; malformed files are errors; and TimeZone never changes
// the process environment.
#include "core/timezone.hpp"
#include "core/tz_rules.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace gua {
namespace tz_rules_test { // named after the file: unique in a unity batch

constexpr std::int64_t k_hour = 3600;

/// The C library's offset east of UTC at `t` under TZ=`zone` (this test's own process only).
std::int64_t libc_utoff(const std::string& zone, std::int64_t t) {
    setenv("TZ", (std::string(":") + zone).c_str(), 1);
    tzset();
    const auto secs = static_cast<std::time_t>(t);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return tm.tm_gmtoff;
}

TEST(TzRules, AgreeWithTheCLibraryAtRandomInstants) {
    const char* saved = std::getenv("TZ");
    const std::string before = saved != nullptr ? saved : "";
    std::mt19937_64 rng(20261128);
    // -2208988800 = 1900-01-01, 4102444800 = 2100-01-01.
    std::uniform_int_distribution<std::int64_t> instant(-2208988800LL, 4102444800LL);
    for (const char* zone :
         {"Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata",
          "America/St_Johns", "Pacific/Chatham", "Europe/Dublin", "America/Sao_Paulo",
          "Africa/Casablanca", "Asia/Tokyo", "UTC", "Antarctica/Troll"}) {
        const Result<ZoneRules> rules = load_tzif(std::string("/usr/share/zoneinfo/") + zone);
        ASSERT_TRUE(rules) << rules.error().message;
        for (int i = 0; i < 2000; ++i) {
            const std::int64_t t = instant(rng);
            ASSERT_EQ(rules.value().utoff_at(t), libc_utoff(zone, t)) << zone << " at " << t;
        }
    }
    if (saved != nullptr) {
        setenv("TZ", before.c_str(), 1);
    } else {
        unsetenv("TZ");
    }
    tzset();
}

TEST(TzRules, PosixRuleSwitchesAtTheRuleInstants) {
    const Result<PosixZone> z = parse_posix_zone("CET-1CEST,M3.5.0,M10.5.0/3");
    ASSERT_TRUE(z) << z.error().message;
    EXPECT_EQ(z.value().std_name, "CET");
    // The last Sundays of March and October 2026 are the 29th and the 25th; 02:00 CET and
    // 03:00 CEST are both 01:00 UTC. 2026-03-29T01:00:00Z = 1774746000.
    const std::int64_t spring = 1774746000;
    const std::int64_t autumn = 1792890000; // 2026-10-25T01:00:00Z
    EXPECT_EQ(z.value().utoff_at(spring - 1), 1 * k_hour);
    EXPECT_EQ(z.value().utoff_at(spring), 2 * k_hour);
    EXPECT_EQ(z.value().utoff_at(autumn - 1), 2 * k_hour);
    EXPECT_EQ(z.value().utoff_at(autumn), 1 * k_hour);
    // Southern hemisphere: daylight time across the new year.
    const Result<PosixZone> sydney = parse_posix_zone("AEST-10AEDT,M10.1.0,M4.1.0/3");
    ASSERT_TRUE(sydney);
    EXPECT_EQ(sydney.value().utoff_at(1767225600), 11 * k_hour); // 2026-01-01T00:00Z
    EXPECT_EQ(sydney.value().utoff_at(1782864000), 10 * k_hour); // 2026-07-01T00:00Z
    EXPECT_EQ(parse_posix_zone("<+0530>-5:30").value().utoff_at(0), 5 * k_hour + 1800);
    for (const char* bad : {"", "C-1", "CET", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0",
                            "CET-1CEST,M3.5.0,M10.5.0/3x", "<AB>1"}) {
        EXPECT_FALSE(parse_posix_zone(bad)) << bad;
    }
}

TEST(TzRules, BeyondTheLastTransitionTheFooterRules) {
    const Result<TimeZone> berlin = TimeZone::load("Europe/Berlin");
    ASSERT_TRUE(berlin);
    // 2040-07-01T12:00:00Z is a Sunday, 14:00 CEST.
    EXPECT_EQ(berlin.value().weekday_hour(2224756800LL * 1'000'000), std::make_pair(0, 14));
    // 2040-01-01T23:30:00Z is a Monday 00:30 CET (a Sunday in UTC).
    EXPECT_EQ(berlin.value().weekday_hour(2209073400LL * 1'000'000), std::make_pair(1, 0));
}

TEST(TzRules, MalformedFilesAreErrors) {
    std::ifstream in("/usr/share/zoneinfo/Europe/Berlin", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(bytes.size(), 100U);
    ASSERT_TRUE(parse_tzif(bytes));
    for (std::size_t n = 0; n + 1 < bytes.size(); ++n) { // every truncation: an error, no crash
        EXPECT_FALSE(parse_tzif(std::string_view(bytes).substr(0, n))) << n << " bytes";
    }
    EXPECT_FALSE(parse_tzif("TZif2 and then nothing useful at all, not even a header"));
    EXPECT_FALSE(TimeZone::load("Not/A_Zone"));
    EXPECT_FALSE(TimeZone::load("../../etc/passwd"));
}

TEST(TzRules, TimeZonesNeverChangeTheEnvironment) {
    char** const environment = environ;
    const char* tz = std::getenv("TZ");
    const std::string tz_before = tz != nullptr ? tz : "<unset>";
    for (const char* name : {"Europe/Berlin", "Asia/Tokyo", "local", "America/New_York"}) {
        const Result<TimeZone> zone = TimeZone::load(name);
        ASSERT_TRUE(zone) << name;
        for (std::int64_t h = 0; h < 48; ++h) {
            zone.value().weekday_hour((1767225600 + h * k_hour) * 1'000'000);
        }
    }
    EXPECT_EQ(environ, environment) << "the environment array was replaced";
    const char* after = std::getenv("TZ");
    EXPECT_EQ(after != nullptr ? after : "<unset>", tz_before);
}

TEST(TzRules, ConcurrentZonesAndEnvironmentReaders) {
    const TimeZone berlin = TimeZone::load("Europe/Berlin").value();
    const TimeZone tokyo = TimeZone::load("Asia/Tokyo").value();
    const TimeZone local = TimeZone::load("local").value();
    std::vector<std::pair<int, int>> expected;
    for (std::int64_t h = 0; h < 200; ++h) {
        for (const TimeZone* z : {&berlin, &tokyo, &local}) {
            expected.push_back(z->weekday_hour((1767225600 + h * k_hour) * 1'000'000));
        }
    }
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int i = 0; i < 3; ++i) { // as the page worker evaluates ?tz= zones
        threads.emplace_back([&, i] {
            std::size_t k = 0;
            for (std::int64_t h = 0; h < 200; ++h) {
                for (const TimeZone* z : {&berlin, &tokyo, &local}) {
                    if (z->weekday_hour((1767225600 + h * k_hour) * 1'000'000) != expected[k++]) {
                        ++mismatches[static_cast<std::size_t>(i)];
                    }
                }
            }
        });
    }
    threads.emplace_back([&] { // as the main thread pings the watchdog and runs notify commands
        for (int n = 0; n < 2000; ++n) {
            if (std::getenv("NOTIFY_SOCKET") == reinterpret_cast<const char*>(1)) {
                ++mismatches[3];
            }
            for (char** e = environ; *e != nullptr; ++e) {
                mismatches[3] += (*e)[0] == '\0' ? 1 : 0;
            }
        }
    });
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

} // namespace tz_rules_test
} // namespace gua

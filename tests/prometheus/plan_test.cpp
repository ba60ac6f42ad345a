// SPDX-License-Identifier: Apache-2.0
// The query planner of fleet reports: host batches and time slices worked out by hand from the
// limits, and for any fleet shape every host and instant covered once with each request in the
// limits.
#include "prometheus/plan.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <vector>

namespace gua::report {
namespace prometheus_plan_test { // named after the file: unique in a unity batch

constexpr DurationUs s = k_us_per_second;
constexpr TimeUs t0 = 1793059200LL * s; // 2026-10-27T00:00:00Z

TEST(PrometheusPlan, ScanBatchesHostsByTheSamplesTheyRead) {
    // 100 series × (36,000 s / 60 s + 1) = 60,100 samples per host; 200,000 allow 3 hosts.
    PromLimits limits;
    limits.max_read_samples = 200000;
    const std::vector<PlannedRequest> plan =
        plan_scan(FleetShape{7, 100, 60 * s}, t0, t0 + 36000 * s, limits);
    const std::vector<PlannedRequest> expected{
        {0, 3, t0, t0 + 36000 * s}, {3, 3, t0, t0 + 36000 * s}, {6, 1, t0, t0 + 36000 * s}};
    EXPECT_EQ(plan, expected);
}

TEST(PrometheusPlan, ScanOfTheBenchmarkFleet) {
    // 125 hosts of 110 series at 30 s over 30 days: 110 × 86,401 = 9,504,110 samples a host;
    // 50,000,000 allow 5 hosts a request: 25 requests over the whole window.
    const std::vector<PlannedRequest> plan =
        plan_scan(FleetShape{125, 110, 30 * s}, t0, t0 + 30 * k_us_per_day, PromLimits{});
    ASSERT_EQ(plan.size(), 25u);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        EXPECT_EQ(plan[i], (PlannedRequest{5 * i, 5, t0, t0 + 30 * k_us_per_day}));
    }
}

TEST(PrometheusPlan, ScanSlicesTimeWhenOneHostReadsTooMuch) {
    // 1,000 series at 10 s over a day read 8,641,000 samples a host; 1,000,000 allow 1,000
    // samples a series: slices of 999 × 10 s = 9,990 s, the ninth ending at the window's end.
    PromLimits limits;
    limits.max_read_samples = 1000000;
    const std::vector<PlannedRequest> plan =
        plan_scan(FleetShape{2, 1000, 10 * s}, t0, t0 + 86400 * s, limits);
    std::vector<PlannedRequest> expected;
    for (std::size_t host = 0; host < 2; ++host) {
        for (int k = 0; k < 8; ++k) {
            expected.push_back({host, 1, t0 + k * 9990 * s, t0 + (k + 1) * 9990 * s});
        }
        expected.push_back({host, 1, t0 + 79920 * s, t0 + 86400 * s});
    }
    EXPECT_EQ(plan, expected);
}

TEST(PrometheusPlan, RangeOfTheHeatmap) {
    // 721 hours over 30 days; a host's 32 series read 32 × (2,592,300 s / 30 s + 1) =
    // 2,765,152 samples (the lookback before the first step included): 18 hosts a request
    // would do (peak 18 × 32 × 721 = 415,296 points), but 4 requests in flight want at least
    // 16 batches: 8 hosts each.
    const TimeUs end = t0 + 30 * k_us_per_day;
    const std::vector<PlannedRequest> plan =
        plan_range(FleetShape{125, 32, 30 * s}, t0, end, 3600 * s, PromLimits{});
    std::vector<PlannedRequest> expected;
    for (std::size_t first = 0; first < 120; first += 8) {
        expected.push_back({first, 8, t0, end});
    }
    expected.push_back({120, 5, t0, end});
    EXPECT_EQ(plan, expected);
    // With one request in flight: 18 hosts each, by what they read.
    PromLimits one;
    one.concurrency = 1;
    const std::vector<PlannedRequest> serial =
        plan_range(FleetShape{125, 32, 30 * s}, t0, end, 3600 * s, one);
    ASSERT_EQ(serial.size(), 7u);
    EXPECT_EQ(serial[0], (PlannedRequest{0, 18, t0, end}));
    EXPECT_EQ(serial[6], (PlannedRequest{108, 17, t0, end}));
}

TEST(PrometheusPlan, RangeSlicesAtTenThousandSteps) {
    const std::vector<PlannedRequest> plan =
        plan_range(FleetShape{1, 1, s}, t0, t0 + 25000 * s, s, PromLimits{});
    const std::vector<PlannedRequest> expected{{0, 1, t0, t0 + 9999 * s},
                                               {0, 1, t0 + 10000 * s, t0 + 19999 * s},
                                               {0, 1, t0 + 20000 * s, t0 + 25000 * s}};
    EXPECT_EQ(plan, expected);
}

TEST(PrometheusPlan, RangeBatchesHostsByPeakSamples) {
    // 1,000 series × 1,441 steps = 1,441,000 points a host: 10,000,000 allow 6 hosts (reading
    // 1,000 × (86,700 s / 15 s + 1) = 5,781,000 samples each, 8 would be allowed). One request
    // in flight, 60 hosts: 10 batches of 6.
    PromLimits limits;
    limits.concurrency = 1;
    const std::vector<PlannedRequest> plan =
        plan_range(FleetShape{60, 1000, 15 * s}, t0, t0 + 86400 * s, 60 * s, limits);
    ASSERT_EQ(plan.size(), 10u);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        EXPECT_EQ(plan[i], (PlannedRequest{6 * i, 6, t0, t0 + 86400 * s}));
    }
}

TEST(PrometheusPlan, LookupsInBatchesOfFiftyHosts) {
    const std::vector<PlannedRequest> plan =
        plan_lookup(FleetShape{120, 110, 30 * s}, t0, PromLimits{});
    const std::vector<PlannedRequest> expected{
        {0, 50, t0, t0}, {50, 50, t0, t0}, {100, 20, t0, t0}};
    EXPECT_EQ(plan, expected);
}

TEST(PrometheusPlan, ChunkBounds) {
    const TimeUs d = k_us_per_day;
    EXPECT_EQ(chunk_bounds(t0, t0 + 3 * d + d / 2, d),
              (std::vector<TimeUs>{t0, t0 + d, t0 + 2 * d, t0 + 3 * d, t0 + 3 * d + d / 2}));
    EXPECT_EQ(chunk_bounds(t0, t0 + 2 * d, d), (std::vector<TimeUs>{t0, t0 + d, t0 + 2 * d}));
    EXPECT_EQ(chunk_bounds(t0, t0 + d / 2, d), (std::vector<TimeUs>{t0, t0 + d / 2}));
}

TEST(PrometheusPlan, LabelMatcherEscapesForPromqlAndRe2) {
    const std::vector<std::string> one{"gpu-node-001:9400"};
    EXPECT_EQ(label_matcher("instance", one), R"(instance="gpu-node-001:9400")");
    const std::vector<std::string> two{"10.0.0.1:9400", "a\"b\\c(d)"};
    EXPECT_EQ(label_matcher("instance", two),
              R"x(instance=~"10\\.0\\.0\\.1:9400|a\"b\\\\c\\(d\\)")x");
}

/// Checks a plan of one time range: every host in exactly one batch per slice, slices
/// contiguous from `start` to `end`, each request within `check`.
template <typename Check>
void covers_each_host_once(const std::vector<PlannedRequest>& plan, std::size_t hosts, TimeUs start,
                           TimeUs end, Check check) {
    std::map<std::size_t, std::vector<PlannedRequest>> by_host;
    for (const PlannedRequest& r : plan) {
        RC_ASSERT(r.hosts >= 1u);
        RC_ASSERT(r.first_host + r.hosts <= hosts);
        check(r);
        for (std::size_t h = r.first_host; h < r.first_host + r.hosts; ++h) {
            by_host[h].push_back(r);
        }
    }
    RC_ASSERT(by_host.size() == hosts);
    for (const auto& [h, requests] : by_host) {
        RC_ASSERT(requests.front().start == start);
        RC_ASSERT(requests.back().end == end);
        for (std::size_t i = 1; i < requests.size(); ++i) {
            RC_ASSERT(requests[i].start >= requests[i - 1].end);
        }
    }
}

RC_GTEST_PROP(PrometheusPlan, ScanRequestsStayWithinTheLimits, ()) {
    const auto hosts = *rc::gen::inRange<std::size_t>(1, 300);
    const auto series = *rc::gen::inRange<std::int64_t>(1, 5000);
    const DurationUs interval = *rc::gen::inRange<DurationUs>(1, 120) * s;
    const DurationUs window = *rc::gen::inRange<DurationUs>(60, 400 * 86400) * s;
    PromLimits limits;
    limits.max_read_samples = *rc::gen::inRange<std::int64_t>(10000, 100000000);
    limits.max_hosts = *rc::gen::inRange<std::size_t>(1, 100);
    const std::vector<PlannedRequest> plan =
        plan_scan(FleetShape{hosts, series, interval}, t0, t0 + window, limits);
    covers_each_host_once(plan, hosts, t0, t0 + window, [&](const PlannedRequest& r) {
        RC_ASSERT(r.hosts <= limits.max_hosts);
        const std::int64_t per_series = samples_in(r.end - r.start, interval);
        // A request reads within the limit unless one series' slice of one sample interval
        // already exceeds it (nothing smaller can be asked for).
        RC_ASSERT(static_cast<std::int64_t>(r.hosts) * series * per_series <=
                      limits.max_read_samples ||
                  (r.hosts == 1 && r.end - r.start <= interval));
        RC_ASSERT(per_series <= limits.max_peak_samples);
    });
}

RC_GTEST_PROP(PrometheusPlan, RangeRequestsStayWithinTheLimits, ()) {
    const auto hosts = *rc::gen::inRange<std::size_t>(1, 300);
    const auto series = *rc::gen::inRange<std::int64_t>(1, 2000);
    const DurationUs interval = *rc::gen::inRange<DurationUs>(5, 120) * s;
    const DurationUs step = *rc::gen::inRange<DurationUs>(1, 3600) * s;
    const std::int64_t steps = *rc::gen::inRange<std::int64_t>(1, 40000);
    const TimeUs end = t0 + (steps - 1) * step;
    const PromLimits limits;
    const std::vector<PlannedRequest> plan =
        plan_range(FleetShape{hosts, series, interval}, t0, end, step, limits);
    covers_each_host_once(plan, hosts, t0, end, [&](const PlannedRequest& r) {
        RC_ASSERT((r.start - t0) % step == 0); // every slice starts on a step of the whole
        const std::int64_t n = (r.end - r.start) / step + 1;
        RC_ASSERT(n <= limits.max_points);
        RC_ASSERT(static_cast<std::int64_t>(r.hosts) * series * n <= limits.max_peak_samples ||
                  r.hosts == 1);
    });
    for (std::size_t i = 1; i < plan.size(); ++i) { // no step asked for twice or left out
        if (plan[i].first_host == plan[i - 1].first_host) {
            RC_ASSERT(plan[i].start == plan[i - 1].end + step);
        }
    }
}

} // namespace prometheus_plan_test
} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The fleet view's arithmetic on state counters (src/fleet/now_runs.cpp): the newest tick's
// state, and how long a state has lasted, on counter samples whose truth each test writes out.
#include "fleet/now_runs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gua::report::fleet_now_runs_test {

using Points = std::vector<std::pair<TimeUs, double>>;

/// Samples of `f` (seconds → counter value) every `every_s` seconds from 0 to `end_s`.
Points sampled(const std::function<double(double)>& f, double every_s, double end_s) {
    Points out;
    for (double t = 0; t <= end_s + 1e-9; t += every_s) {
        out.emplace_back(static_cast<TimeUs>(t * 1e6), f(t));
    }
    return out;
}

/// A card that ticks every second: active (from a history of 100 s) until `change_s`, idle-held
/// (from 50 s) after it.
std::map<std::string, Points> active_then_idle(double change_s, double every_s, double end_s) {
    return {
        {"active", sampled([=](double t) { return 100 + std::min(t, change_s); }, every_s, end_s)},
        {"idle_held",
         sampled([=](double t) { return 50 + std::max(t - change_s, 0.0); }, every_s, end_s)},
        {"truly_idle", sampled([](double) { return 7.0; }, every_s, end_s)}};
}

TEST(FleetNowRuns, IdleHeldSinceTheLastOtherStateExactToTheTick) {
    const CounterTimeline t = align_counters(active_then_idle(4, 1, 10));
    const auto tick = newest_tick(t);
    ASSERT_TRUE(tick);
    EXPECT_EQ(state_of_interval(t, *tick), "idle_held");
    const StateRun run = state_run(t, "idle_held");
    EXPECT_DOUBLE_EQ(run.seconds, 10 - 4);
    EXPECT_FALSE(run.at_least);
}

TEST(FleetNowRuns, ScrapesSlowerThanTicksStillCountTheStateExactly) {
    // Scraped every 2 s, the change at 5 s falls inside the interval (4, 6].
    const CounterTimeline t = align_counters(active_then_idle(5, 2, 10));
    const StateRun run = state_run(t, "idle_held");
    EXPECT_DOUBLE_EQ(run.seconds, 10 - 5);
    EXPECT_FALSE(run.at_least);
}

TEST(FleetNowRuns, ARunThatFillsTheSamplesIsOnlyALowerBound) {
    const CounterTimeline t = align_counters(active_then_idle(-1, 1, 10));
    const StateRun run = state_run(t, "idle_held");
    EXPECT_DOUBLE_EQ(run.seconds, 10);
    EXPECT_TRUE(run.at_least);
    EXPECT_EQ(run.base, 0u);
}

TEST(FleetNowRuns, IntervalsWithoutATickNeitherEndARunNorDecideTheState) {
    // Scraped every 0.5 s, ticks every second: every other interval has no growth; the last has
    // none either.
    auto series = active_then_idle(3, 1, 8);
    for (auto& [state, points] : series) {
        Points doubled;
        for (const auto& p : points) {
            doubled.push_back(p);
            doubled.emplace_back(p.first + 500000, p.second);
        }
        points = doubled;
    }
    const CounterTimeline t = align_counters(series);
    const auto tick = newest_tick(t);
    ASSERT_TRUE(tick);
    EXPECT_EQ(t.times[*tick], 8 * k_us_per_second) << "the interval that grew, not the last one";
    EXPECT_DOUBLE_EQ(state_run(t, "idle_held").seconds, 8 - 3);
}

TEST(FleetNowRuns, ACounterThatGoesDownEndsTheRunAtTheReset) {
    auto series = active_then_idle(-1, 1, 10);
    for (auto& [state, points] : series) {
        for (auto& p : points) {
            if (p.first >= 6 * k_us_per_second) {
                p.second -= 40; // a new database from 6 s on
            }
        }
    }
    const StateRun run = state_run(align_counters(series), "idle_held");
    EXPECT_DOUBLE_EQ(run.seconds, 10 - 6);
    EXPECT_TRUE(run.at_least);
}

TEST(FleetNowRuns, ASeriesBornInsideTheSamplesCountsFromZero) {
    // allocated_unused appears at 3 s with 1 s: it grew from nothing, so the idle-held run ends.
    auto series = active_then_idle(-1, 1, 6);
    series["allocated_unused"] = {{3 * k_us_per_second, 1.0},
                                  {4 * k_us_per_second, 1.0},
                                  {5 * k_us_per_second, 1.0},
                                  {6 * k_us_per_second, 1.0}};
    const CounterTimeline t = align_counters(series);
    EXPECT_DOUBLE_EQ(t.values.at("allocated_unused")[0], 0);
    const StateRun run = state_run(t, "idle_held");
    EXPECT_DOUBLE_EQ(run.seconds, 6 - 2) << "counted from the interval (2, 3] on";
    EXPECT_FALSE(run.at_least);
}

TEST(FleetNowRuns, AHolderWhoCameLaterIsCountedFromTheirArrival) {
    const CounterTimeline t = align_counters(active_then_idle(-1, 1, 10));
    // The user's share of the idle-held time grows from 6 s on (half the card's memory).
    const std::vector<double> user =
        values_at(t.times, sampled([](double s) { return 0.5 * std::max(s - 6, 0.0); }, 1, 10));
    const StateRun run = holder_run(t, user);
    EXPECT_DOUBLE_EQ(run.seconds, 10 - 6);
    EXPECT_FALSE(run.at_least);
    const std::vector<double> always =
        values_at(t.times, sampled([](double s) { return 0.5 * s; }, 1, 10));
    const StateRun whole = holder_run(t, always);
    EXPECT_DOUBLE_EQ(whole.seconds, 10);
    EXPECT_TRUE(whole.at_least);
}

TEST(FleetNowRuns, NoGrowthMeansNoTick) {
    const CounterTimeline t = align_counters({{"active", {{0, 5.0}, {k_us_per_second, 5.0}}}});
    EXPECT_FALSE(newest_tick(t));
}

} // namespace gua::report::fleet_now_runs_test

// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end for the ring's physical limit: 0.2 s bursts once a second on a driver
// sampling every 1/6 s, through the real daemon on the fake driver at 1 s and 30 s. Each ring entry
// is its period's busy share, and a period busy ≥ 10 % counts whole, so the bursts are rounded up
// to the periods they touch: gua's active time is the scenario's rounded to the period grid (not
// the exact 20 %), and the report says so in a note (docs/measurement.md, "Activity inside a sample
// period").
#include "e2e/truth_harness.hpp"

namespace gua::e2e {
namespace truth_ring_period_test { // named after the file: unique in a unity batch

constexpr double k_start = 600;       ///< scenario time of the daemon's first poll
constexpr double k_period = 1.0 / 6;  ///< the fake ring's sample period
constexpr double k_burst_from = 0.05; ///< each second's burst: [n + 0.05, n + 0.25)
constexpr double k_burst_s = 0.2;
const char* const k_uuid = "GPU-7e570000-0000-0000-0000-000000000000";

/// 100 % during each second's burst, 0 otherwise, from before the run to after it.
json bursts() {
    json points = json::array({json::array({0.0, 0})});
    for (int n = static_cast<int>(k_start) - 120; n < static_cast<int>(k_start) + 1300; ++n) {
        points.push_back({n + k_burst_from, 100});
        points.push_back({n + k_burst_from + k_burst_s, 0});
    }
    return points;
}

/// `util` on the ring's period grid: each period 100 when its mean reaches the 10 % active
/// threshold, else 0 — the most any reading of the ring can say (integrated with test::Series).
json on_the_period_grid(const json& util, double from, double to) {
    const test::Series series(util);
    json points = json::array({json::array({0.0, 0})});
    for (double k = std::floor(from / k_period); k * k_period < to; ++k) {
        const double a = k * k_period;
        const double mean = series.integral(a, a + k_period) / k_period;
        points.push_back({a, mean >= 10 ? 100 : 0});
    }
    return points;
}

class TruthRingPeriod : public TruthTest, public ::testing::WithParamInterface<double> {};

TEST_P(TruthRingPeriod, BurstsShorterThanThePeriodAreRoundedUpAndTheReportSaysSo) {
    TruthRun run;
    run.interval_s = GetParam();
    run.ticks = GetParam() >= 30 ? 10 : 60;
    run.start_s = k_start;
    const json util = bursts();
    const json scenario = {
        {"devices",
         json::array({{{"uuid", k_uuid}, {"util", util}, {"util_period_s", k_period}}})}};
    const TruthOutcome o = run_truth(scenario, run);
    const std::string name = fmt::format("0.2 s bursts on a 1/6 s ring, {} s ticks", GetParam());
    ASSERT_TRUE(o.figures.cards.contains(k_uuid)) << name;
    const ReportCard& g = o.figures.cards.at(k_uuid);
    const double rec = o.truth.at(k_uuid).recorded_s;
    const double exact = o.truth.at(k_uuid).active_s;
    // The same scenario on the period grid, over the same recorded time (contiguous from start).
    json gridded = scenario;
    gridded["devices"][0]["util"] = on_the_period_grid(util, k_start - 10, k_start + o.span_s + 10);
    const double rounded =
        test::GroundTruth(gridded).integrate(k_uuid, {{k_start, k_start + o.span_s}}).active_s;
    EXPECT_NEAR(g.active_s, rounded, 0.01 * rec + g.flagged_s()) << name;
    EXPECT_GT(rounded - exact, 0.05 * rec) << name << ": the rounding is what the note is about";
    bool noted = false;
    for (const json& note : o.report.value("notes", json::array())) {
        noted = noted || note.get<std::string>().find("shorter than the driver's sample period") !=
                             std::string::npos;
    }
    EXPECT_TRUE(noted) << name << ": " << o.report.value("notes", json::array()).dump(2);
    std::cout << fmt::format("[truth] {}: active {:.1f} % gua, {:.1f} % on the period grid, "
                             "{:.1f} % exact; flagged {:.1f} %; note {}\n",
                             name, 100 * g.active_s / rec, 100 * rounded / rec, 100 * exact / rec,
                             100 * g.flagged_s() / rec, noted ? "present" : "absent");
}

INSTANTIATE_TEST_SUITE_P(Intervals, TruthRingPeriod, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace truth_ring_period_test
} // namespace gua::e2e

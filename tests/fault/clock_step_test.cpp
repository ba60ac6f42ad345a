// SPDX-License-Identifier: Apache-2.0
// Fault matrix, time: the wall clock stepped back (NTP, an administrator) and then forward while
// the daemon records on the simulated clock. Every tick is kept; the five minutes the wall clock
// lives twice are recorded once (no overlap); the hour's jump forward, longer than the ticks
// bridge, is a coverage gap, never idle time.
#include "fault/fault_harness.hpp"

#include <csignal>

namespace gua::fault {
namespace clock_step_test { // named after the file: unique in a unity batch

class FaultMatrixClock : public FaultTest {
  protected:
    /// Seconds added to the daemon's wall clock from its next wait on (core/clock.hpp).
    void step_wall_clock(double seconds) const {
        e2e::write_atomically(path("clock.wall_step"), std::to_string(seconds));
    }
};

TEST_F(FaultMatrixClock, SteppedBackAndForwardKeepsEveryTickRecordedOnce) {
    write_scenario(two_cards());
    use_simulated_clock();
    auto daemon = start_daemon({"--interval", "30s"});
    ASSERT_TRUE(daemon->wait_for("Z tick 20 ")) << daemon->err();
    step_wall_clock(-300); // ten ticks back
    ASSERT_TRUE(daemon->wait_for("Z tick 40 ")) << daemon->err();
    step_wall_clock(3300); // an hour ahead of the first step
    ASSERT_TRUE(daemon->wait_for("Z tick 50 ")) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(10s), 0) << daemon->err();
    const std::string log = daemon->err();
    EXPECT_EQ(log.find("ERROR"), std::string::npos) << log;
    EXPECT_EQ(ticks_per_run(), std::vector<std::int64_t>{logged_ticks(log)});

    // Overlap, computed from the rows: each card's summed durations minus the union of its spans.
    test::RawDb raw(db());
    const double summed_s = std::stod(raw.one("SELECT sum(duration_us) FROM card_tick")) / 1e6;
    double union_s = 0;
    for (const auto& [uuid, seconds] : recorded_union_s()) {
        union_s += seconds;
    }
    const double overlap_s = summed_s - union_s;
    EXPECT_LT(overlap_s, 0.01) << "the five minutes lived twice are recorded once";
    const json report = report_over_everything();
    EXPECT_NEAR(report.at("coverage").at("overlap_seconds").get<double>(), overlap_s, 0.01);
    bool hour_gap = false;
    for (const json& gap : report.at("coverage").at("gaps")) {
        const TimeUs from = parse_iso8601(gap.at("from").get<std::string>()).value();
        const TimeUs to = parse_iso8601(gap.at("to").get<std::string>()).value();
        hour_gap = hour_gap || to - from >= 50 * k_us_per_minute;
    }
    EXPECT_TRUE(hour_gap) << report.at("coverage").dump();
    expect_sound_and_consistent();
}

} // namespace clock_step_test
} // namespace gua::fault

// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end: the wall clock stepped 60 s forward (NTP, an administrator) while a
// card is busy all the time, with ring timestamps in the epoch and in the boot-time domain. The
// driver's rings are read against poll spans measured on the monotonic clock, so the card stays
// 100 % busy after the step (it read 0 % from then on when spans followed the wall clock); the
// skipped minute is a gap in coverage, never idle time.
#include "e2e/truth_harness.hpp"

namespace gua::e2e {
namespace truth_clock_test { // named after the file: unique in a unity batch

constexpr std::uint32_t k_uid_a = 1500;

class TruthClockStep : public TruthTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(TruthClockStep, AForwardStepNeverMakesABusyCardIdle) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json busy = json::array({json::array({0.0, 100})});
    const json scenario = {{"devices",
                            {{{"uuid", "GPU-7e570000-0000-0000-0000-000000000000"},
                              {"util", busy},
                              {"timestamp_domain", GetParam()}}}},
                           {"processes",
                            {{{"device", 0},
                              {"pid_env", "GUA_TRUTH_A"},
                              {"who", user_label(k_uid_a)},
                              {"memory_mib", json::array({json::array({0.0, 8000})})},
                              {"sm_util", busy}}}}};
    // Added to the daemon's wall clock from its first wait on: right after the priming poll.
    write_atomically(m_dir.file("clock.wall_step"), "60");
    TruthRun run;
    run.interval_s = 30;
    run.ticks = 10;
    const TruthOutcome o = run_truth(scenario, run);
    check(o, "clock stepped forward (" + GetParam() + " timestamps)");
    ASSERT_EQ(o.figures.cards.size(), 1U);
    const ReportCard& card = o.figures.cards.begin()->second;
    EXPECT_NEAR(card.active_s, 300, 1) << "ten busy 30 s ticks, all active";
    EXPECT_LT(card.truly_idle_s + card.idle_held_s, 1);
}

INSTANTIATE_TEST_SUITE_P(Domains, TruthClockStep, ::testing::Values("epoch", "boot"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

} // namespace truth_clock_test
} // namespace gua::e2e

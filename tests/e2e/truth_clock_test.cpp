// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end: the wall clock stepped 60 s forward or back (NTP, an administrator)
// while a card is busy all the time, with ring timestamps in the epoch and in the boot-time
// domain. The driver's rings are read against poll spans measured on the monotonic clock, so the
// card stays 100 % busy after the step (it read 0 % from then on when spans followed the wall
// clock); a forward step's minute is unmeasured (never idle time, never a gap), a backward step's
// minute is recorded once (never an overlap).
#include "e2e/truth_harness.hpp"

#include <tuple>

namespace gua::e2e {
namespace truth_clock_test { // named after the file: unique in a unity batch

constexpr std::uint32_t k_uid_a = 1500;

class TruthClockStep : public TruthTest,
                       public ::testing::WithParamInterface<std::tuple<std::string, int>> {};

TEST_P(TruthClockStep, AStepNeverMakesABusyCardIdle) {
    const auto& [domain, step_s] = GetParam();
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json busy = json::array({json::array({0.0, 100})});
    const json scenario = {{"devices",
                            {{{"uuid", "GPU-7e570000-0000-0000-0000-000000000000"},
                              {"util", busy},
                              {"timestamp_domain", domain}}}},
                           {"processes",
                            {{{"device", 0},
                              {"pid_env", "GUA_TRUTH_A"},
                              {"who", user_label(k_uid_a)},
                              {"memory_mib", json::array({json::array({0.0, 8000})})},
                              {"sm_util", busy}}}}};
    // Added to the daemon's wall clock from its first wait on: right after the priming poll.
    write_atomically(m_dir.file("clock.wall_step"), std::to_string(step_s));
    TruthRun run;
    run.interval_s = 30;
    run.ticks = 10;
    const TruthOutcome o = run_truth(scenario, run);
    check(o, "clock stepped " + std::to_string(step_s) + " s (" + domain + " timestamps)");
    ASSERT_EQ(o.figures.cards.size(), 1U);
    const ReportCard& card = o.figures.cards.begin()->second;
    EXPECT_NEAR(card.active_s, 300, 1) << "ten busy 30 s ticks, all active";
    EXPECT_LT(card.truly_idle_s + card.idle_held_s, 1);
    EXPECT_NEAR(card.flagged_s(), step_s > 0 ? step_s : 0, 1)
        << "a forward step's minute unmeasured; a backward one's recorded once";
    EXPECT_NEAR(o.span_s, 300 + std::max(step_s, 0), 1) << "neither a gap nor an overlap";
}

INSTANTIATE_TEST_SUITE_P(Steps, TruthClockStep,
                         ::testing::Combine(::testing::Values("epoch", "boot"),
                                            ::testing::Values(60, -60)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& p) {
                             return std::get<0>(p.param) +
                                    (std::get<1>(p.param) > 0 ? "Forward" : "Back");
                         });

} // namespace truth_clock_test
} // namespace gua::e2e

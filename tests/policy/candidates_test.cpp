// SPDX-License-Identifier: Apache-2.0
// Candidates: a process is idle-held only when idle on every card where it holds memory.
#include "policy/candidates.hpp"
#include "policy/support.hpp"

#include <gtest/gtest.h>

namespace gua::policy {
namespace candidates_test { // named after the file: unique in a unity batch

using policy_test::card;
using policy_test::process;

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

TEST(PolicyCandidates, AggregatesCardsAndTakesTheShortestStreak) {
    const audit::Thresholds th;
    audit::StreakBook book;
    // pid 10 idles on GPU 0 from the start and on GPU 1 from the second tick; pid 11 computes on
    // GPU 1 while idle on GPU 0; pid 12 has no start time.
    for (int i = 0; i < 3; ++i) {
        const telemetry::Tick t = policy_test::tick(
            static_cast<std::uint64_t>(i), k_t0 + i * 10 * k_s, 10 * k_s,
            {card(0, 0, 10 * k_s, {process(10, 100, 4096, 0.0), process(11, 110, 2048, 0.0)}),
             card(1, 60, 10 * k_s,
                  {process(10, 100, 1024, i == 0 ? 50.0 : 0.0),
                   process(11, 110, 2048, 60.0, "bob")})});
        audit::observe(book, audit::cards_of(t), th);
        if (i < 2) {
            continue;
        }
        telemetry::Tick last = t;
        telemetry::ProcessTick unknown = process(12, 0, 512, 0.0);
        unknown.start_ticks.reset();
        last.cards[0].processes.push_back(unknown);
        audit::observe(book, audit::cards_of(last), th);
        const std::vector<Candidate> cs = idle_candidates(audit::cards_of(last), book, th);
        ASSERT_EQ(cs.size(), 1U);
        const Candidate& c = cs[0];
        EXPECT_EQ(c.process, (audit::ProcessKey{10, 100}));
        EXPECT_EQ(c.memory_mib, 4096 + 1024);
        ASSERT_EQ(c.gpus.size(), 2U);
        EXPECT_EQ(c.gpus[1].index, 1);
        EXPECT_EQ(c.idle_since, k_t0 + 10 * k_s);
        EXPECT_EQ(c.identity.user, "alice");
    }
}

} // namespace candidates_test
} // namespace gua::policy

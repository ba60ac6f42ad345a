// SPDX-License-Identifier: Apache-2.0
// Idle-held streaks: forward folding, gap bridging, pid reuse, and the backward rewind agreeing
// with the forward fold on any history.
#include "audit/streak.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <vector>

namespace gua::audit {
namespace {

constexpr DurationUs k_s = k_us_per_second;
const std::string k_gpu = "GPU-a";

TEST(StreakBook, ExtendsWhileIdleHeldAndEndsOtherwise) {
    StreakBook book;
    const ProcessKey p{42, 1000};
    book.observe(k_gpu, 0, 10 * k_s, {{p, true}});
    book.observe(k_gpu, 10 * k_s, 10 * k_s, {{p, true}});
    EXPECT_EQ(book.find({k_gpu, p}), (Streak{0, 20 * k_s, 20 * k_s}));
    book.observe(k_gpu, 20 * k_s, 10 * k_s, {{p, false}});
    EXPECT_FALSE(book.find({k_gpu, p}));
    book.observe(k_gpu, 30 * k_s, 10 * k_s, {{p, true}});
    EXPECT_EQ(book.find({k_gpu, p}), (Streak{30 * k_s, 40 * k_s, 10 * k_s}));
    book.observe(k_gpu, 40 * k_s, 10 * k_s, {});
    EXPECT_FALSE(book.find({k_gpu, p})) << "absent from a card-tick of its card: released";
}

TEST(StreakBook, GapWithoutTicksBridgesButDoesNotCount) {
    StreakBook book;
    const ProcessKey p{42, 1000};
    book.observe(k_gpu, 0, 10 * k_s, {{p, true}});
    book.observe(k_gpu, 3600 * k_s, 10 * k_s, {{p, true}});
    EXPECT_EQ(book.find({k_gpu, p}), (Streak{0, 3610 * k_s, 20 * k_s}));
}

TEST(StreakBook, ReusedPidStartsOver) {
    StreakBook book;
    book.observe(k_gpu, 0, 10 * k_s, {{{42, 1000}, true}});
    book.observe(k_gpu, 10 * k_s, 10 * k_s, {{{42, 2000}, true}});
    EXPECT_FALSE(book.find({k_gpu, {42, 1000}}));
    EXPECT_EQ(book.find({k_gpu, {42, 2000}}), (Streak{10 * k_s, 20 * k_s, 10 * k_s}));
}

TEST(StreakBook, CardsAreIndependent) {
    StreakBook book;
    const ProcessKey p{42, 1000};
    book.observe("GPU-a", 0, 10 * k_s, {{p, true}});
    book.observe("GPU-b", 0, 10 * k_s, {{p, false}});
    EXPECT_TRUE(book.find({"GPU-a", p}));
    EXPECT_FALSE(book.find({"GPU-b", p}));
}

struct Step {
    DurationUs gap_us;
    std::vector<HoldingSeen> seen;
};

RC_GTEST_PROP(StreakRewind, AgreesWithTheForwardFold, ()) {
    const auto pid = rc::gen::inRange<std::uint32_t>(1, 4);
    const auto steps = *rc::gen::container<std::vector<Step>>(rc::gen::build<Step>(
        rc::gen::set(&Step::gap_us, rc::gen::element<DurationUs>(0, 0, 0, 600 * k_s)),
        rc::gen::set(
            &Step::seen,
            rc::gen::container<std::vector<HoldingSeen>>(rc::gen::build<HoldingSeen>(
                rc::gen::set(&HoldingSeen::process,
                             rc::gen::build<ProcessKey>(
                                 rc::gen::set(&ProcessKey::pid, pid),
                                 rc::gen::set(&ProcessKey::start_ticks,
                                              rc::gen::just(std::optional<std::uint64_t>(7))))),
                rc::gen::set(&HoldingSeen::idle_held, rc::gen::arbitrary<bool>()))))));
    RC_PRE(!steps.empty());
    // Deduplicate processes within a tick (holdings_seen lists each process once).
    std::vector<Step> ticks = steps;
    for (Step& s : ticks) {
        std::map<ProcessKey, bool> once;
        for (const HoldingSeen& h : s.seen) {
            once.try_emplace(h.process, h.idle_held);
        }
        s.seen.clear();
        for (const auto& [k, idle] : once) {
            s.seen.push_back({k, idle});
        }
    }
    StreakBook book;
    std::vector<TimeUs> t0s;
    TimeUs t = 0;
    for (const Step& s : ticks) {
        t += s.gap_us;
        t0s.push_back(t);
        book.observe(k_gpu, t, 10 * k_s, s.seen);
        t += 10 * k_s;
    }
    StreakRewind rewind(t0s.back(), 10 * k_s, ticks.back().seen);
    for (std::size_t i = ticks.size() - 1; i-- > 0;) {
        if (!rewind.older(t0s[i], 10 * k_s, ticks[i].seen)) {
            break;
        }
    }
    std::map<ProcessKey, Streak> forward;
    for (const auto& [key, streak] : book.streaks()) {
        forward.emplace(key.process, streak);
    }
    RC_ASSERT(forward == rewind.streaks());
}

} // namespace
} // namespace gua::audit

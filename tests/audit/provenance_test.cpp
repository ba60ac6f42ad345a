// SPDX-License-Identifier: Apache-2.0
// Measurement provenance in the audit: classification of each combination of unmeasured, idle
// with no holder listed and idle with holders unknown; provenance totals per card; attribution
// with the sampler's per-process active time; overlapping card-ticks counted once.
#include "audit/attribute.hpp"
#include "audit/classify.hpp"
#include "audit/rescale.hpp"
#include "audit/window.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace gua::audit {
namespace provenance_test { // named after the file: unique in a unity batch

constexpr DurationUs k_dur = 30 * k_us_per_second;
constexpr std::uint32_t k_nobody = 99;
constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;

std::pair<int, int> no_cell(TimeUs) {
    return {1, 10};
}

ProcTick holder(std::uint32_t identity, std::int64_t mib, std::optional<double> sm = std::nullopt,
                std::optional<DurationUs> active = std::nullopt) {
    ProcTick p;
    p.identity = identity;
    p.mem_used_mib = mib;
    p.sm_util_pct = sm;
    p.active_us = active;
    return p;
}

CardTick card(DurationUs active, DurationUs unmeasured, DurationUs unlisted, DurationUs unknown,
              std::vector<ProcTick> procs) {
    CardTick t;
    t.t0 = k_t0;
    t.duration_us = k_dur;
    t.active_us = active;
    t.unmeasured_us = unmeasured;
    t.idle_unlisted_us = unlisted;
    t.idle_unknown_us = unknown;
    t.util_source = telemetry::UtilSource::partial;
    t.processes = std::move(procs);
    return t;
}

TEST(Provenance, ClassifiesEveryCombinationOfTheNewFields) {
    const std::vector<ProcTick> held{holder(1, 4096)};
    const std::vector<ProcTick> none{};
    // For each combination (in whole seconds), the truth: active as recorded, unmeasured =
    // unmeasured + holders unknown, truly idle = unlisted + (the rest when not held), idle-held =
    // the rest when held.
    const DurationUs s = k_us_per_second;
    for (const DurationUs active : {0 * s, 6 * s}) {
        for (const DurationUs unmeasured : {0 * s, 5 * s}) {
            for (const DurationUs unlisted : {0 * s, 4 * s}) {
                for (const DurationUs unknown : {0 * s, 3 * s}) {
                    for (const bool is_held : {false, true}) {
                        const CardTick t =
                            card(active, unmeasured, unlisted, unknown, is_held ? held : none);
                        const StateTimes st = classify(t, Thresholds{});
                        const DurationUs rest = k_dur - active - unmeasured - unlisted - unknown;
                        EXPECT_EQ(st.active, active);
                        EXPECT_EQ(st.unmeasured, unmeasured + unknown);
                        EXPECT_EQ(st.truly_idle, unlisted + (is_held ? 0 : rest));
                        EXPECT_EQ(st.idle_held, is_held ? rest : 0);
                        EXPECT_EQ(st.total(), k_dur);
                    }
                }
            }
        }
    }
}

TEST(Provenance, TickWithoutUtilizationIsWhollyUnmeasured) {
    CardTick t = card(0, 0, 0, 0, {holder(1, 4096)});
    t.active_us = std::nullopt;
    t.idle_unknown_us = 7 * k_us_per_second; // ignored: nothing was measured at all
    const StateTimes st = classify(t, Thresholds{});
    EXPECT_EQ(st.unmeasured, k_dur);
    EXPECT_EQ(st.total(), k_dur);
}

TEST(Provenance, InconsistentFieldsStillAddUpToTheDuration) {
    // A recording whose parts exceed the duration is clamped, never more than the tick.
    const CardTick t = card(20 * k_us_per_second, 8 * k_us_per_second, 5 * k_us_per_second,
                            5 * k_us_per_second, {holder(1, 4096)});
    const StateTimes st = classify(t, Thresholds{});
    EXPECT_EQ(st.active, 20 * k_us_per_second);
    EXPECT_EQ(st.unmeasured, 10 * k_us_per_second);
    EXPECT_EQ(st.truly_idle, 0);
    EXPECT_EQ(st.total(), k_dur);
}

TEST(Provenance, AccumulatorTotalsCardTimeBySourceAndWhyUnmeasured) {
    WindowAccumulator acc(Thresholds{}, k_nobody, no_cell);
    const DurationUs s = k_us_per_second;
    CardTick a = card(10 * s, 6 * s, 0, 4 * s, {holder(1, 4096)}); // partial ring
    acc.add(a);
    CardTick b = card(3 * s, 0, 0, 0, {holder(1, 4096)});
    b.t0 += k_dur;
    b.util_source = telemetry::UtilSource::snapshot;
    acc.add(b);
    CardTick c = card(0, 0, 0, 0, {holder(1, 4096)});
    c.t0 += 2 * k_dur;
    c.active_us = std::nullopt; // MIG: no utilization at all
    c.util_source = telemetry::UtilSource::none;
    acc.add(c);
    CardTick d = card(30 * s, 0, 0, 0, {holder(1, 4096)});
    d.t0 += 3 * k_dur;
    d.util_source = telemetry::UtilSource::samples;
    acc.add(d);

    const Provenance& p = acc.gpus().at(0).provenance;
    using telemetry::UtilSource;
    EXPECT_EQ(p.by_source_us[static_cast<std::size_t>(UtilSource::partial)], k_dur - 6 * s);
    EXPECT_EQ(p.by_source_us[static_cast<std::size_t>(UtilSource::snapshot)], k_dur);
    EXPECT_EQ(p.by_source_us[static_cast<std::size_t>(UtilSource::samples)], k_dur);
    EXPECT_EQ(p.by_source_us[static_cast<std::size_t>(UtilSource::none)], 0);
    EXPECT_EQ(p.util_unknown_us, 6 * s + k_dur);
    EXPECT_EQ(p.no_reading_us, k_dur);
    EXPECT_EQ(p.holders_unknown_us, 4 * s);
    // Every card-second is either measured by one source or utilization-unknown.
    const DurationUs by_source =
        std::accumulate(p.by_source_us.begin(), p.by_source_us.end(), DurationUs{0});
    EXPECT_EQ(by_source + p.util_unknown_us, 4 * k_dur);
    EXPECT_EQ(acc.states().unmeasured, p.util_unknown_us + p.holders_unknown_us);
}

TEST(Provenance, PerProcessActiveTimeIsAttributedAsRecorded) {
    // 20 s active: the sampler gave 12 s to identity 1 and 2 s to identity 2 poll by poll; the
    // remaining 6 s (polls with no per-process reading) split by SM share 30 : 10.
    const DurationUs s = k_us_per_second;
    const CardTick t =
        card(20 * s, 0, 0, 0, {holder(1, 1000, 30.0, 12 * s), holder(2, 3000, 10.0, 2 * s)});
    const StateTimes st = classify(t, Thresholds{});
    std::vector<IdentityShareUs> shares;
    attribute_us(t, st, Thresholds{}, k_nobody, shares);
    ASSERT_EQ(shares.size(), 2U);
    EXPECT_EQ(shares[0].active_us, 12 * s + 6 * s * 30 / 40);
    EXPECT_EQ(shares[1].active_us, 2 * s + 6 * s * 10 / 40);
    // Idle-held (10 s) by held memory 1000 : 3000.
    EXPECT_EQ(shares[0].idle_held_us, 10 * s / 4);
    EXPECT_EQ(shares[1].idle_held_us, 10 * s * 3 / 4);
}

TEST(Provenance, IdleHeldIsSplitOverTheIdleHeldPartOnly) {
    // 4 s unmeasured, 6 s unlisted: only 30 − 10 − 4 − 6 = 10 s are idle-held.
    const DurationUs s = k_us_per_second;
    const CardTick t = card(10 * s, 4 * s, 6 * s, 0, {holder(1, 1000, 50.0, 10 * s)});
    const StateTimes st = classify(t, Thresholds{});
    std::vector<IdentityShareUs> shares;
    attribute_us(t, st, Thresholds{}, k_nobody, shares);
    ASSERT_EQ(shares.size(), 1U);
    EXPECT_EQ(shares[0].active_us, 10 * s);
    EXPECT_EQ(shares[0].idle_held_us, 10 * s);
}

RC_GTEST_PROP(Provenance, AttributionAddsUpToCardTimeWithPerProcessActive, ()) {
    const auto dur = *rc::gen::inRange<DurationUs>(1, 120 * k_us_per_second);
    CardTick t;
    t.t0 = k_t0;
    t.duration_us = dur;
    const auto active = *rc::gen::inRange<DurationUs>(0, dur + 1);
    t.active_us = active;
    t.unmeasured_us = *rc::gen::inRange<DurationUs>(0, dur - active + 1);
    t.idle_unlisted_us = *rc::gen::inRange<DurationUs>(0, dur - active - t.unmeasured_us + 1);
    const auto n = *rc::gen::inRange<int>(0, 5);
    DurationUs left = active;
    for (int i = 0; i < n; ++i) {
        ProcTick p;
        p.identity = static_cast<std::uint32_t>(1 + *rc::gen::inRange<int>(0, 3));
        p.mem_used_mib = *rc::gen::inRange<std::int64_t>(0, 50000);
        if (*rc::gen::arbitrary<bool>()) {
            p.sm_util_pct = *rc::gen::inRange<int>(0, 101);
        }
        if (*rc::gen::arbitrary<bool>()) {
            const auto us = *rc::gen::inRange<DurationUs>(0, left + 1);
            p.active_us = us;
            left -= us;
        }
        t.processes.push_back(p);
    }
    const StateTimes st = classify(t, Thresholds{});
    RC_ASSERT(st.total() == dur);
    std::vector<IdentityShareUs> shares;
    attribute_us(t, st, Thresholds{}, k_nobody, shares);
    DurationUs active_sum = 0;
    DurationUs held_sum = 0;
    for (const IdentityShareUs& sh : shares) {
        active_sum += sh.active_us;
        held_sum += sh.idle_held_us;
    }
    RC_ASSERT(active_sum == st.active);
    RC_ASSERT(held_sum == st.idle_held);
    for (const ProcTick& p : t.processes) {
        if (p.active_us) {
            // An identity gets at least the active time the sampler recorded for its process.
            DurationUs own = 0;
            for (const ProcTick& q : t.processes) {
                own += q.identity == p.identity ? q.active_us.value_or(0) : 0;
            }
            const auto it = std::find_if(shares.begin(), shares.end(),
                                         [&](const auto& sh) { return sh.identity == p.identity; });
            RC_ASSERT(it != shares.end());
            RC_ASSERT(it->active_us >= own);
        }
    }
}

TEST(Provenance, TwoRunsRecordingTheSameCardAreCountedOnce) {
    // Two writers recorded the same GPU every 5 s, offset by 2.5 s: run A [0, 5) [5, 10)
    // [10, 15), run B [2.5, 7.5) [7.5, 12.5). Wall time covered: [0, 15) = 15 s; recorded 25 s.
    WindowAccumulator acc(Thresholds{}, k_nobody, no_cell);
    const DurationUs five = 5 * k_us_per_second;
    const DurationUs half = five / 2;
    std::vector<CardTick> ticks;
    for (const TimeUs t0 : {TimeUs{0}, half, five, five + half, 2 * five}) {
        CardTick t;
        t.t0 = k_t0 + t0;
        t.duration_us = five;
        t.active_us = five; // busy throughout
        t.util_source = telemetry::UtilSource::samples;
        ticks.push_back(t);
    }
    for (const CardTick& t : ticks) {
        acc.add(t);
    }
    const GpuTotals& g = acc.gpus().at(0);
    EXPECT_EQ(g.states.total(), 3 * five); // [0, 15): never more than the wall time
    EXPECT_EQ(g.states.active, 3 * five);
    EXPECT_EQ(g.overlap_us, 2 * five); // 25 s recorded − 15 s wall
    EXPECT_EQ(g.provenance.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::samples)],
              3 * five);
}

TEST(Provenance, OverlapKeepsTheProportionsOfTheUncoveredPart) {
    WindowAccumulator acc(Thresholds{}, k_nobody, no_cell);
    CardTick a = card(0, 0, 0, 0, {holder(1, 4096)});
    acc.add(a); // 30 s idle-held
    CardTick b = card(k_dur / 2, 0, 0, 0, {holder(1, 4096)});
    b.t0 += k_dur / 3; // [10, 40) s: 20 s overlap; 10 s new, half of it active
    acc.add(b);
    const GpuTotals& g = acc.gpus().at(0);
    EXPECT_EQ(g.overlap_us, 2 * k_dur / 3);
    EXPECT_EQ(g.states.total(), k_dur + k_dur / 3);
    EXPECT_EQ(g.states.active, k_dur / 6);
    EXPECT_EQ(g.states.idle_held, k_dur + k_dur / 6);
    // A second card at the same instants overlaps nothing.
    CardTick other = a;
    other.gpu = 1;
    other.t0 += k_dur / 3;
    acc.add(other);
    EXPECT_EQ(acc.gpus().at(1).overlap_us, 0);
}

TEST(Provenance, ClockJitterBetweenTicksIsCountedOnceButNotReportedAsOverlap) {
    // One daemon's 30 s ticks overlapping by 7 µs and 40 ms (the wall clock slewed): counted
    // once, not "recorded more than once"; 100 ms over a 30 s tick is more than jitter.
    WindowAccumulator acc(Thresholds{}, k_nobody, no_cell);
    TimeUs t0 = k_t0;
    for (const DurationUs back : {DurationUs{0}, DurationUs{7}, 40 * k_us_per_ms}) {
        CardTick t;
        t.t0 = t0 - back;
        t.duration_us = k_dur;
        t.active_us = k_dur;
        t.util_source = telemetry::UtilSource::samples;
        acc.add(t);
        t0 = t.t0 + k_dur;
    }
    EXPECT_EQ(acc.gpus().at(0).overlap_us, 0);
    EXPECT_EQ(acc.gpus().at(0).states.total(), 3 * k_dur - 7 - 40 * k_us_per_ms);
    CardTick late;
    late.t0 = t0 - 100 * k_us_per_ms;
    late.duration_us = k_dur;
    late.active_us = k_dur;
    acc.add(late);
    EXPECT_EQ(acc.gpus().at(0).overlap_us, 100 * k_us_per_ms);
}

TEST(Provenance, RescaleKeepsEveryPartProportional) {
    CardTick t = card(12 * k_us_per_second, 6 * k_us_per_second, 3 * k_us_per_second,
                      3 * k_us_per_second, {holder(1, 100, 40.0, 8 * k_us_per_second)});
    t.bucket_us = {18 * k_us_per_second, 0, 12 * k_us_per_second, 0};
    rescale(t, k_dur / 3);
    EXPECT_EQ(t.duration_us, 10 * k_us_per_second);
    EXPECT_EQ(*t.active_us, 4 * k_us_per_second);
    EXPECT_EQ(t.unmeasured_us, 2 * k_us_per_second);
    EXPECT_EQ(t.idle_unlisted_us, k_us_per_second);
    EXPECT_EQ(t.idle_unknown_us, k_us_per_second);
    EXPECT_EQ(t.bucket_us[0], 6 * k_us_per_second);
    EXPECT_EQ(*t.processes[0].active_us, std::llround(8.0 * k_us_per_second / 3.0));
}

} // namespace provenance_test
} // namespace gua::audit

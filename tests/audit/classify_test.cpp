// SPDX-License-Identifier: Apache-2.0
// Card-tick classification: the active / idle-held / truly-idle boundaries, holders, unmeasured
// time and the efficiency buckets (DESIGN.md "Words" and "Measurement rules").
#include "audit/classify.hpp"
#include "audit/from_tick.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gua::audit {
namespace classify_test { // named after the file: unique in a unity batch

constexpr DurationUs k_dur = 30 * k_us_per_second;

ProcTick proc(std::optional<std::int64_t> mib,
              telemetry::ProcessType type = telemetry::ProcessType::compute) {
    ProcTick p;
    p.identity = 1;
    p.type = type;
    p.mem_used_mib = mib;
    return p;
}

CardTick tick(std::optional<DurationUs> active_us, std::vector<ProcTick> procs) {
    CardTick t;
    t.t0 = 1767607200LL * k_us_per_second;
    t.duration_us = k_dur;
    t.active_us = active_us;
    t.processes = std::move(procs);
    return t;
}

/// A card-tick folded by the real sampler from one utilization reading covering the whole tick.
CardTick one_sample(double util_pct, std::vector<ProcTick> procs, double threshold = 10.0) {
    identity::Resolver resolver;
    Thresholds thresholds;
    thresholds.active_util_pct = threshold;
    sampler::TickBuilder builder(thresholds, resolver);
    builder.start(0);
    telemetry::DevicePoll poll;
    poll.uuid = "GPU-x";
    poll.util_source = telemetry::UtilSource::snapshot;
    poll.util.push_back(telemetry::UtilSample{util_pct, 1});
    builder.add_poll({poll}, k_dur, {});
    const telemetry::Tick folded = builder.finish(0);
    CardTick t = to_card_tick(folded, folded.cards.at(0));
    t.processes = std::move(procs);
    t.idle_unlisted_us = 0; // the processes are attached here, not listed in the poll
    return t;
}

TEST(Classify, NinePercentIsIdleTenPercentIsActive) {
    const Thresholds th;
    const CardTick nine = one_sample(9.0, {proc(8000)});
    ASSERT_TRUE(nine.active_us.has_value());
    EXPECT_EQ(*nine.active_us, 0);
    const StateTimes s9 = classify(nine, th);
    EXPECT_EQ(s9.active, 0);
    EXPECT_EQ(s9.idle_held, k_dur);
    EXPECT_EQ(s9.truly_idle, 0);

    const CardTick ten = one_sample(10.0, {proc(8000)});
    EXPECT_EQ(ten.active_us, k_dur);
    const StateTimes s10 = classify(ten, th);
    EXPECT_EQ(s10.active, k_dur);
    EXPECT_EQ(s10.idle_held, 0);
    EXPECT_EQ(s10.truly_idle, 0);
    EXPECT_EQ(s10.unmeasured, 0);
}

TEST(Classify, HeldMemoryBoundaryIsStrictlyAbove100MiB) {
    const Thresholds th;
    const StateTimes at = classify(tick(0, {proc(100)}), th);
    EXPECT_EQ(at.truly_idle, k_dur);
    EXPECT_EQ(at.idle_held, 0);
    const StateTimes above = classify(tick(0, {proc(101)}), th);
    EXPECT_EQ(above.idle_held, k_dur);
    EXPECT_EQ(above.truly_idle, 0);
    // Holders add up: 60 + 41 MiB = 101 MiB.
    const StateTimes summed = classify(tick(0, {proc(60), proc(41)}), th);
    EXPECT_EQ(summed.idle_held, k_dur);
}

TEST(Classify, GraphicsOnlyCardIsTrulyIdleUnlessGraphicsCounts) {
    const CardTick xorg = tick(0, {proc(128, telemetry::ProcessType::graphics)});
    Thresholds th;
    EXPECT_FALSE(is_holder(xorg.processes[0], th));
    EXPECT_FALSE(is_held(xorg, th));
    EXPECT_EQ(classify(xorg, th).truly_idle, k_dur);
    EXPECT_EQ(classify(xorg, th).idle_held, 0);

    th.graphics_is_holder = true;
    EXPECT_TRUE(is_holder(xorg.processes[0], th));
    EXPECT_EQ(classify(xorg, th).idle_held, k_dur);
    EXPECT_EQ(classify(xorg, th).truly_idle, 0);
}

TEST(Classify, GraphicsMemoryDoesNotTopUpComputeHolders) {
    const Thresholds th;
    const CardTick t = tick(0, {proc(60), proc(4000, telemetry::ProcessType::graphics)});
    EXPECT_EQ(classify(t, th).truly_idle, k_dur);
}

TEST(Classify, MpsCountsAsHolder) {
    const Thresholds th;
    const CardTick t = tick(0, {proc(2048, telemetry::ProcessType::mps)});
    EXPECT_TRUE(is_holder(t.processes[0], th));
    EXPECT_EQ(classify(t, th).idle_held, k_dur);
}

TEST(Classify, UnknownMemoryOfComputeHolderCountsAsHeld) {
    const Thresholds th;
    EXPECT_EQ(classify(tick(0, {proc(std::nullopt)}), th).idle_held, k_dur);
    // A graphics context with unknown memory is still not a holder.
    EXPECT_EQ(
        classify(tick(0, {proc(std::nullopt, telemetry::ProcessType::graphics)}), th).truly_idle,
        k_dur);
}

TEST(Classify, NoProcessesIsTrulyIdle) {
    const StateTimes s = classify(tick(0, {}), Thresholds{});
    EXPECT_EQ(s.truly_idle, k_dur);
    EXPECT_EQ(s.total(), k_dur);
}

TEST(Classify, UnmeasuredUtilizationIsAllUnmeasured) {
    const StateTimes s = classify(tick(std::nullopt, {proc(40000)}), Thresholds{});
    EXPECT_EQ(s.unmeasured, k_dur);
    EXPECT_EQ(s.active, 0);
    EXPECT_EQ(s.idle_held, 0);
    EXPECT_EQ(s.truly_idle, 0);
    EXPECT_STREQ(dominant_state(tick(std::nullopt, {proc(40000)}), Thresholds{}), "n/a");
}

TEST(Classify, FractionalActiveSplitsTheRest) {
    const Thresholds th;
    const DurationUs active = k_dur * 40 / 100;
    const StateTimes held = classify(tick(active, {proc(8000)}), th);
    EXPECT_EQ(held.active, 12 * k_us_per_second);
    EXPECT_EQ(held.idle_held, 18 * k_us_per_second); // 60 % idle-held
    EXPECT_EQ(held.truly_idle, 0);
    const StateTimes free = classify(tick(active, {}), th);
    EXPECT_EQ(free.active, 12 * k_us_per_second);
    EXPECT_EQ(free.truly_idle, 18 * k_us_per_second);
}

TEST(Classify, ActiveIsClampedToTheDuration) {
    const StateTimes over = classify(tick(k_dur + 5, {proc(8000)}), Thresholds{});
    EXPECT_EQ(over.active, k_dur);
    EXPECT_EQ(over.idle_held, 0);
    const StateTimes under = classify(tick(-5, {proc(8000)}), Thresholds{});
    EXPECT_EQ(under.active, 0);
    EXPECT_EQ(under.idle_held, k_dur);
}

TEST(Classify, ThresholdsAreConfigurable) {
    Thresholds th;
    th.held_mib = 500;
    EXPECT_EQ(classify(tick(0, {proc(400)}), th).truly_idle, k_dur);
    EXPECT_EQ(classify(tick(0, {proc(501)}), th).idle_held, k_dur);
    th.held_mib = 0;
    EXPECT_EQ(classify(tick(0, {proc(1)}), th).idle_held, k_dur);

    // The active threshold is applied when the samples are folded.
    EXPECT_EQ(one_sample(20.0, {}, 25.0).active_us, 0);
    EXPECT_EQ(one_sample(25.0, {}, 25.0).active_us, k_dur);
    EXPECT_EQ(one_sample(5.0, {}, 5.0).active_us, k_dur);
}

TEST(Classify, StateTimesAddUp) {
    StateTimes a{1, 2, 3, 4};
    a += StateTimes{10, 20, 30, 40};
    EXPECT_EQ(a.active, 11);
    EXPECT_EQ(a.idle_held, 22);
    EXPECT_EQ(a.truly_idle, 33);
    EXPECT_EQ(a.unmeasured, 44);
    EXPECT_EQ(a.total(), 110);
}

TEST(Classify, DominantState) {
    const Thresholds th;
    EXPECT_STREQ(dominant_state(tick(k_dur, {proc(8000)}), th), "active");
    EXPECT_STREQ(dominant_state(tick(0, {proc(8000)}), th), "idle-held");
    EXPECT_STREQ(dominant_state(tick(0, {}), th), "truly-idle");
}

TEST(Classify, BucketBoundaries) {
    EXPECT_EQ(bucket_of(0.0), Bucket::idle);
    EXPECT_EQ(bucket_of(9.99), Bucket::idle);
    EXPECT_EQ(bucket_of(10.0), Bucket::underutilized);
    EXPECT_EQ(bucket_of(69.99), Bucket::underutilized);
    EXPECT_EQ(bucket_of(70.0), Bucket::productive);
    EXPECT_EQ(bucket_of(89.99), Bucket::productive);
    EXPECT_EQ(bucket_of(90.0), Bucket::compute_bound);
    EXPECT_EQ(bucket_of(100.0), Bucket::compute_bound);
}

} // namespace classify_test
} // namespace gua::audit

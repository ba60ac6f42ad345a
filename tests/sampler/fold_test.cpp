// SPDX-License-Identifier: Apache-2.0
// TickBuilder: folding polls into a tick — weighted utilization, bucket times, process merging,
// lost cards and unmeasured time (never extrapolated), idle time without holders, per-process
// active time on the poll grid, processes keyed by (pid, start time).
#include "identity/child_process.hpp"
#include "identity/fake_proc.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <linux/sched.h>
#include <map>
#include <numeric>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace fold_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

telemetry::DevicePoll poll(const std::string& uuid, std::vector<telemetry::UtilSample> util,
                           telemetry::UtilSource source = telemetry::UtilSource::samples) {
    telemetry::DevicePoll p;
    p.uuid = uuid;
    p.util_source = source;
    p.util = std::move(util);
    return p;
}

telemetry::ProcessReading reading(std::uint32_t pid, std::optional<std::int64_t> mib,
                                  std::optional<double> sm,
                                  telemetry::ProcessType type = telemetry::ProcessType::compute) {
    telemetry::ProcessReading r;
    r.pid = pid;
    r.type = type;
    r.mem_used_mib = mib;
    r.sm_util_pct = sm;
    telemetry::Identity who;
    who.user = "user" + std::to_string(pid);
    r.identity = who;
    return r;
}

telemetry::DevicePoll lost_poll(const std::string& uuid) {
    telemetry::DevicePoll p = poll(uuid, {}, telemetry::UtilSource::none);
    p.lost = true;
    return p;
}

audit::Thresholds thresholds(bool graphics_is_holder = false) {
    audit::Thresholds t;
    t.active_util_pct = 10.0;
    t.graphics_is_holder = graphics_is_holder;
    return t;
}

/// The integer identities every measured card-tick keeps: buckets + unmeasured = duration, active
/// and the idle parts within the measured time, processes' active time within the card's.
void expect_adds_up(const telemetry::CardTickRecord& c, DurationUs duration) {
    ASSERT_TRUE(c.active_us.has_value());
    const DurationUs buckets = std::accumulate(c.bucket_us.begin(), c.bucket_us.end(), 0LL);
    EXPECT_EQ(buckets + c.unmeasured_us, duration);
    EXPECT_GE(*c.active_us, 0);
    EXPECT_GE(c.idle_unlisted_us, 0);
    EXPECT_GE(c.idle_unknown_us, 0);
    EXPECT_LE(*c.active_us + c.idle_unlisted_us + c.idle_unknown_us, buckets);
    DurationUs processes = 0;
    for (const telemetry::ProcessTick& p : c.processes) {
        EXPECT_GE(p.active_us.value_or(0), 0);
        processes += p.active_us.value_or(0);
    }
    EXPECT_LE(processes, *c.active_us);
}

class Fold : public ::testing::Test {
  protected:
    identity::Resolver m_resolver{"/nonexistent-proc"};
    TickBuilder m_builder{thresholds(), m_resolver};
    std::unordered_map<std::string, telemetry::DeviceInfo> m_devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}},
        {"GPU-b", telemetry::DeviceInfo{"GPU-b", 1, "Card B", 40960, "", ""}}};

    telemetry::Tick
    fold(const std::vector<std::pair<std::vector<telemetry::DevicePoll>, DurationUs>>& polls) {
        m_builder.start(k_t0);
        for (const auto& [p, span] : polls) {
            m_builder.add_poll(p, span, m_devices);
        }
        return m_builder.finish(7);
    }
};

TEST_F(Fold, HalfAtHundredHalfAtZeroIsHalfActive) {
    const telemetry::Tick t = fold({{{poll("GPU-a", {{100, 5}, {0, 5}})}, 30 * k_s}});
    EXPECT_EQ(t.seq, 7U);
    EXPECT_EQ(t.t0, k_t0);
    EXPECT_EQ(t.duration_us, 30 * k_s);
    ASSERT_EQ(t.cards.size(), 1U);
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.device.name, "Card A");
    EXPECT_EQ(c.util_source, telemetry::UtilSource::samples);
    EXPECT_EQ(c.active_us, 15 * k_s);
    ASSERT_TRUE(c.util_pct.has_value());
    EXPECT_DOUBLE_EQ(*c.util_pct, 50.0);
    const std::array<DurationUs, 4> buckets{15 * k_s, 0, 0, 15 * k_s};
    EXPECT_EQ(c.bucket_us, buckets);
    EXPECT_EQ(c.util_samples, 2U);
}

TEST_F(Fold, SamplesFallIntoTheirBuckets) {
    const telemetry::Tick t = fold(
        {{{poll("GPU-a", {{5, 1}, {9.99, 1}, {10, 1}, {69.99, 1}, {70, 1}, {90, 1}})}, 60 * k_s}});
    const std::array<DurationUs, 4> buckets{20 * k_s, 20 * k_s, 10 * k_s, 10 * k_s};
    EXPECT_EQ(t.cards[0].bucket_us, buckets);
    EXPECT_EQ(t.cards[0].active_us, 40 * k_s);
}

TEST_F(Fold, RelativeWeightsAreRescaledToTheRealSpan) {
    // Weights 3:1 over a 20 s poll: 15 s at 100 %, 5 s at 0 %.
    const telemetry::Tick t = fold({{{poll("GPU-a", {{100, 3}, {0, 1}})}, 20 * k_s}});
    EXPECT_EQ(t.cards[0].active_us, 15 * k_s);
    EXPECT_DOUBLE_EQ(*t.cards[0].util_pct, 75.0);
    EXPECT_EQ(t.cards[0].bucket_us[3], 15 * k_s);
    EXPECT_EQ(t.cards[0].bucket_us[0], 5 * k_s);
}

TEST_F(Fold, PollsAreWeightedByTheirSpans) {
    const telemetry::Tick t =
        fold({{{poll("GPU-a", {{100, 1}})}, 10 * k_s}, {{poll("GPU-a", {{40, 1}})}, 20 * k_s}});
    EXPECT_EQ(t.duration_us, 30 * k_s);
    EXPECT_EQ(t.cards[0].active_us, 30 * k_s);
    EXPECT_DOUBLE_EQ(*t.cards[0].util_pct, 60.0);
    const std::array<DurationUs, 4> buckets{0, 20 * k_s, 0, 10 * k_s};
    EXPECT_EQ(t.cards[0].bucket_us, buckets);
}

TEST_F(Fold, BucketsAlwaysAddUpToTheDuration) {
    // Thirds of 10 s do not round evenly.
    const telemetry::Tick t = fold({{{poll("GPU-a", {{0, 1}, {50, 1}, {80, 1}})}, 10 * k_s}});
    const auto& b = t.cards[0].bucket_us;
    EXPECT_EQ(b[0] + b[1] + b[2] + b[3], 10 * k_s);
    EXPECT_NEAR(static_cast<double>(b[0]), 10e6 / 3, 1.0);
}

TEST_F(Fold, ProcessesMergeAcrossPolls) {
    telemetry::DevicePoll first = poll("GPU-a", {{50, 1}});
    first.processes = {reading(1, 1000, 90.0), reading(2, 500, std::nullopt)};
    telemetry::DevicePoll second = poll("GPU-a", {{50, 1}});
    second.processes = {reading(1, 3000, 30.0), reading(3, std::nullopt, 20.0),
                        reading(1, 64, std::nullopt, telemetry::ProcessType::graphics)};
    telemetry::DevicePoll third = poll("GPU-a", {{50, 1}});
    third.processes = {reading(1, 2000, std::nullopt)};
    const telemetry::Tick t = fold({{{first}, 10 * k_s}, {{second}, 20 * k_s}, {{third}, 5 * k_s}});
    ASSERT_EQ(t.cards.size(), 1U);
    const auto& procs = t.cards[0].processes;
    ASSERT_EQ(procs.size(), 4U);
    std::map<std::pair<std::uint32_t, telemetry::ProcessType>, telemetry::ProcessTick> by_key;
    for (const telemetry::ProcessTick& p : procs) {
        by_key[{p.pid, p.type}] = p;
    }
    const telemetry::ProcessTick& p1 = by_key.at({1, telemetry::ProcessType::compute});
    EXPECT_EQ(p1.mem_used_mib, 3000); // largest reading
    ASSERT_TRUE(p1.sm_util_pct.has_value());
    EXPECT_DOUBLE_EQ(*p1.sm_util_pct, 50.0); // (90·10 + 30·20) / 30, the poll without SM skipped
    EXPECT_EQ(p1.identity.user, "user1");
    const telemetry::ProcessTick& p2 = by_key.at({2, telemetry::ProcessType::compute});
    EXPECT_EQ(p2.mem_used_mib, 500);
    EXPECT_EQ(p2.sm_util_pct, std::nullopt);
    const telemetry::ProcessTick& p3 = by_key.at({3, telemetry::ProcessType::compute});
    EXPECT_EQ(p3.mem_used_mib, std::nullopt);
    EXPECT_DOUBLE_EQ(p3.sm_util_pct.value_or(-1), 20.0);
    EXPECT_EQ(by_key.at({1, telemetry::ProcessType::graphics}).mem_used_mib, 64);
}

TEST_F(Fold, ProcessWithoutKnownIdentityGoesThroughTheResolver) {
    telemetry::DevicePoll p = poll("GPU-a", {{0, 1}});
    telemetry::ProcessReading r = reading(4, 100, std::nullopt);
    r.identity.reset();
    p.processes = {r};
    const telemetry::Tick t = fold({{{p}, 10 * k_s}});
    ASSERT_EQ(t.cards[0].processes.size(), 1U);
    EXPECT_EQ(t.cards[0].processes[0].identity.user, "unknown");
}

TEST_F(Fold, ACardLostForPartOfTheTickKeepsItsMeasuredPart) {
    const telemetry::Tick t =
        fold({{{poll("GPU-a", {{100, 1}}), poll("GPU-b", {{100, 1}, {0, 3}})}, 8 * k_s},
              {{poll("GPU-a", {{100, 1}}), lost_poll("GPU-b")}, 12 * k_s}});
    ASSERT_EQ(t.cards.size(), 2U);
    EXPECT_EQ(t.lost_uuids, std::vector<std::string>{"GPU-b"});
    EXPECT_EQ(t.cards[0].device.uuid, "GPU-a");
    EXPECT_EQ(t.cards[0].util_source, telemetry::UtilSource::samples);
    EXPECT_EQ(t.cards[0].unmeasured_us, 0);
    const telemetry::CardTickRecord& b = t.cards[1];
    EXPECT_EQ(b.device.uuid, "GPU-b");
    // 8 s measured (2 s at 100 %, 6 s at 0 %), then 12 s lost.
    EXPECT_EQ(b.util_source, telemetry::UtilSource::partial);
    EXPECT_EQ(b.active_us, 2 * k_s);
    EXPECT_EQ(b.unmeasured_us, 12 * k_s);
    const std::array<DurationUs, 4> buckets{6 * k_s, 0, 0, 2 * k_s};
    EXPECT_EQ(b.bucket_us, buckets);
    EXPECT_DOUBLE_EQ(b.util_pct.value_or(-1), 25.0);
    expect_adds_up(b, 20 * k_s);
}

TEST_F(Fold, ACardLostForTheWholeTickIsRecordedAllUnmeasured) {
    telemetry::DevicePoll lost = lost_poll("GPU-b");
    const telemetry::Tick t = fold(
        {{{poll("GPU-a", {{0, 1}}), lost}, 10 * k_s}, {{poll("GPU-a", {{0, 1}}), lost}, 5 * k_s}});
    ASSERT_EQ(t.cards.size(), 2U);
    EXPECT_EQ(t.lost_uuids, std::vector<std::string>{"GPU-b"});
    const telemetry::CardTickRecord& b = t.cards[1];
    EXPECT_EQ(b.device.name, "Card B");
    EXPECT_EQ(b.util_source, telemetry::UtilSource::none);
    EXPECT_EQ(b.active_us, 0);
    EXPECT_EQ(b.unmeasured_us, 15 * k_s);
    EXPECT_EQ(b.util_pct, std::nullopt);
    const std::array<DurationUs, 4> zero{};
    EXPECT_EQ(b.bucket_us, zero);
    EXPECT_EQ(b.idle_unlisted_us, 0);
    expect_adds_up(b, 15 * k_s);
}

// A card that opens mid-tick in place of a stand-in (DeviceInfo::replaces): one card-tick, the
// card's, over the whole tick, the stand-in's lost span unmeasured in it.
TEST_F(Fold, ACardThatTakesOverAStandInMidTickGetsItsLostSpanUnmeasured) {
    m_devices["unopened-1"] =
        telemetry::DeviceInfo{"unopened-1", 1, telemetry::k_stand_in_name, std::nullopt, "", ""};
    m_devices["GPU-b"].replaces = "unopened-1";
    const telemetry::Tick t =
        fold({{{poll("GPU-a", {{100, 1}}), lost_poll("unopened-1")}, 10 * k_s},
              {{poll("GPU-a", {{100, 1}}), lost_poll("unopened-1")}, 5 * k_s},
              {{poll("GPU-a", {{100, 1}}), poll("GPU-b", {{100, 1}, {0, 1}})}, 15 * k_s}});
    ASSERT_EQ(t.cards.size(), 2U);
    const telemetry::CardTickRecord& b = t.cards[1];
    EXPECT_EQ(b.device.uuid, "GPU-b");
    EXPECT_EQ(b.device.replaces, "unopened-1");
    EXPECT_EQ(b.unmeasured_us, 15 * k_s);
    EXPECT_EQ(b.active_us, 7500 * k_us_per_ms);
    EXPECT_EQ(t.lost_uuids, std::vector<std::string>{"GPU-b"});
    expect_adds_up(b, 30 * k_s);
}

TEST_F(Fold, PollsACardMissedAreUnmeasured) {
    // GPU-b appears at the second poll only (hot-plugged, or back from the bus).
    const telemetry::Tick t =
        fold({{{poll("GPU-a", {{0, 1}})}, 10 * k_s},
              {{poll("GPU-a", {{0, 1}}), poll("GPU-b", {{50, 1}})}, 5 * k_s}});
    ASSERT_EQ(t.cards.size(), 2U);
    EXPECT_TRUE(t.lost_uuids.empty());
    EXPECT_EQ(t.cards[1].active_us, 5 * k_s);
    EXPECT_EQ(t.cards[1].unmeasured_us, 10 * k_s);
    EXPECT_EQ(t.cards[1].util_source, telemetry::UtilSource::partial);
    expect_adds_up(t.cards[1], 15 * k_s);
}

TEST_F(Fold, APollWithoutUtilizationIsUnmeasuredNotExtrapolated) {
    // 10 s measured at 100 %, then 20 s without a reading: only the measured 10 s are active.
    const telemetry::Tick t = fold({{{poll("GPU-a", {{100, 1}})}, 10 * k_s},
                                    {{poll("GPU-a", {}, telemetry::UtilSource::none)}, 20 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(t.duration_us, 30 * k_s);
    EXPECT_EQ(c.active_us, 10 * k_s);
    EXPECT_EQ(c.unmeasured_us, 20 * k_s);
    EXPECT_EQ(c.util_source, telemetry::UtilSource::partial);
    EXPECT_DOUBLE_EQ(*c.util_pct, 100.0);
    EXPECT_EQ(c.bucket_us[3], 10 * k_s);
    expect_adds_up(c, 30 * k_s);

    const telemetry::Tick half =
        fold({{{poll("GPU-a", {{100, 1}, {0, 1}})}, 10 * k_s},
              {{poll("GPU-a", {}, telemetry::UtilSource::none)}, 10 * k_s}});
    EXPECT_EQ(half.cards[0].active_us, 5 * k_s);
    EXPECT_EQ(half.cards[0].bucket_us[0], 5 * k_s);
    EXPECT_EQ(half.cards[0].unmeasured_us, 10 * k_s);
    expect_adds_up(half.cards[0], 20 * k_s);
}

// DevicePoll::unmeasured_us is on the scale of the sample weights: samples and unmeasured part
// together stand for the poll's real span.
TEST_F(Fold, TheUnmeasuredPartOfAPollIsScaledLikeItsSamples) {
    telemetry::DevicePoll first = poll("GPU-a", {{100, 2 * k_s}, {0, 1 * k_s}});
    first.unmeasured_us = 1 * k_s; // nominal 4 s standing for a real 8 s: everything doubles
    const telemetry::Tick t =
        fold({{{first}, 8 * k_s}, {{poll("GPU-a", {{50, 3 * k_s}})}, 3 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.util_source, telemetry::UtilSource::partial);
    EXPECT_EQ(c.unmeasured_us, 2 * k_s);
    EXPECT_EQ(c.active_us, 4 * k_s + 3 * k_s);
    const std::array<DurationUs, 4> buckets{2 * k_s, 3 * k_s, 0, 4 * k_s};
    EXPECT_EQ(c.bucket_us, buckets);
    // Mean over the measured 9 s: (100·4 + 0·2 + 50·3) / 9.
    EXPECT_DOUBLE_EQ(*c.util_pct, (100.0 * 4 + 50.0 * 3) / 9);
    expect_adds_up(c, 11 * k_s);

    // A poll whose samples were all lost leaves its span unmeasured.
    telemetry::DevicePoll empty = poll("GPU-a", {}, telemetry::UtilSource::partial);
    empty.unmeasured_us = 5 * k_s;
    const telemetry::Tick lost =
        fold({{{poll("GPU-a", {{100, 1}})}, 5 * k_s}, {{empty}, 10 * k_s}});
    EXPECT_EQ(lost.cards[0].active_us, 5 * k_s);
    EXPECT_EQ(lost.cards[0].unmeasured_us, 10 * k_s);
    const telemetry::Tick none = fold({{{empty}, 10 * k_s}});
    EXPECT_EQ(none.cards[0].active_us, 0);
    EXPECT_EQ(none.cards[0].unmeasured_us, 10 * k_s);
    EXPECT_EQ(none.cards[0].util_source, telemetry::UtilSource::none);
}

TEST_F(Fold, UtilSourceIsTheWeakestOfThePolls) {
    using telemetry::UtilSource;
    const auto source_of = [&](std::vector<UtilSource> sources) {
        std::vector<std::pair<std::vector<telemetry::DevicePoll>, DurationUs>> polls;
        for (const UtilSource s : sources) {
            polls.push_back({{poll("GPU-a", {{50, 1}}, s)}, 5 * k_s});
        }
        return fold(polls).cards.at(0).util_source;
    };
    EXPECT_EQ(source_of({UtilSource::samples, UtilSource::samples}), UtilSource::samples);
    EXPECT_EQ(source_of({UtilSource::samples, UtilSource::snapshot}), UtilSource::snapshot);
    EXPECT_EQ(source_of({UtilSource::snapshot, UtilSource::snapshot}), UtilSource::snapshot);
    EXPECT_EQ(source_of({UtilSource::partial, UtilSource::snapshot}), UtilSource::partial);
    EXPECT_EQ(source_of({UtilSource::samples, UtilSource::none}), UtilSource::partial);
    EXPECT_EQ(source_of({UtilSource::none, UtilSource::none}), UtilSource::none);
}

TEST_F(Fold, UnmeasuredTickHasNoUtilization) {
    const telemetry::Tick t = fold({{{poll("GPU-a", {}, telemetry::UtilSource::none)}, 10 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.util_source, telemetry::UtilSource::none);
    EXPECT_EQ(c.active_us, std::nullopt); // never measurable (MIG): the whole tick is unmeasured
    EXPECT_EQ(c.unmeasured_us, 0);
    EXPECT_EQ(c.util_pct, std::nullopt);
    const std::array<DurationUs, 4> zero{};
    EXPECT_EQ(c.bucket_us, zero);
    // A source that claims samples but delivers none is unmeasured too.
    const telemetry::Tick empty = fold({{{poll("GPU-a", {})}, 10 * k_s}});
    EXPECT_EQ(empty.cards[0].active_us, std::nullopt);
}

// Clocks-event reasons: each reason's time is the span of the polls that read its bit, poll by
// poll (truth: the bits of each poll × its span); a tick whose polls read no reasons has none.
TEST_F(Fold, ClocksEventTimeIsCountedPollByPoll) {
    const auto with = [&](std::int64_t bits) {
        telemetry::DevicePoll p = poll("GPU-a", {{50, 1}});
        p.readings.clock_events = bits;
        return p;
    };
    telemetry::DevicePoll none = poll("GPU-a", {{50, 1}});
    // idle 2 s; power cap 5 s; power cap + hw thermal 3 s; no reading 4 s; hw thermal 1 s.
    const telemetry::Tick t = fold({{{with(0x1)}, 2 * k_s},
                                    {{with(0x4)}, 5 * k_s},
                                    {{with(0x44)}, 3 * k_s},
                                    {{none}, 4 * k_s},
                                    {{with(0x40)}, 1 * k_s}});
    const telemetry::CardReadings& r = t.cards.at(0).readings;
    EXPECT_EQ(r.clock_events, 0x45);
    EXPECT_EQ(r.clocks_idle_us, 2 * k_s);
    EXPECT_EQ(r.clocks_sw_power_cap_us, 8 * k_s);
    EXPECT_EQ(r.clocks_hw_thermal_us, 4 * k_s);
    EXPECT_EQ(r.clocks_sw_thermal_us, 0) << "read, never set: 0";
    EXPECT_EQ(r.clocks_hw_slowdown_us, 0);
    const telemetry::Tick unread = fold({{{none}, 5 * k_s}});
    EXPECT_FALSE(unread.cards.at(0).readings.clocks_idle_us.has_value()) << "n/a, not 0";
    EXPECT_FALSE(unread.cards.at(0).readings.clock_events.has_value());
}

// The energy counter becomes energy per tick: the increase since the previous tick's last
// reading, in whole joules with the remainder carried, so ticks add up to the counter's increase.
TEST_F(Fold, EnergyCounterBecomesWholeJoulesPerTickThatAddUp) {
    const auto at = [&](std::int64_t mj) {
        telemetry::DevicePoll p = poll("GPU-a", {{50, 1}});
        p.readings.energy_mj = mj;
        return p;
    };
    const std::int64_t start = 5'000'000'123;
    const telemetry::Tick first =
        fold({{{at(start)}, 5 * k_s}, {{at(start + 1'000'400)}, 5 * k_s}});
    EXPECT_EQ(first.cards.at(0).readings.energy_mj, 1'000'000) << "1000.4 J: 1000 J, 0.4 carried";
    const telemetry::Tick second = fold({{{at(start + 2'000'900)}, 10 * k_s}});
    EXPECT_EQ(second.cards.at(0).readings.energy_mj, 1'001'000) << "1000.5 + 0.4 carried";
    telemetry::DevicePoll none = poll("GPU-a", {{50, 1}});
    const telemetry::Tick unread = fold({{{none}, 10 * k_s}});
    EXPECT_FALSE(unread.cards.at(0).readings.energy_mj.has_value()) << "no reading: n/a";
    // The next reading covers the unread tick too; the counter going back (driver reloaded) has
    // an unknown increase for that poll.
    const telemetry::Tick later = fold({{{at(start + 3'000'900)}, 10 * k_s}});
    EXPECT_EQ(later.cards.at(0).readings.energy_mj, 1'000'000);
    const telemetry::Tick reset = fold({{{at(1000)}, 10 * k_s}, {{at(401'000)}, 10 * k_s}});
    EXPECT_EQ(reset.cards.at(0).readings.energy_mj, 400'000);
    const std::int64_t total = *first.cards[0].readings.energy_mj +
                               *second.cards[0].readings.energy_mj +
                               *later.cards[0].readings.energy_mj;
    EXPECT_LE(std::abs(total - 3'000'900), 500) << "within half a joule of the counter's rise";
}

// A GPM reading is a mean over its poll's span: the tick's value is their time-weighted mean
// over the polls that had one (a poll without it neither counts as 0 nor dilutes the mean), and
// a tick without any reading is n/a.
TEST_F(Fold, GpmMeansAreWeightedByThePollSpansThatHadThem) {
    const auto with = [&](std::optional<std::int64_t> cpct) {
        telemetry::DevicePoll p = poll("GPU-a", {{50, 1}});
        p.readings.sm_active_cpct = cpct;
        p.readings.fp16_active_cpct = cpct ? std::optional<std::int64_t>(0) : std::nullopt;
        return p;
    };
    // 90 % for 2 s, 10 % for 6 s, unread 4 s, 50 % for 2 s: (180 + 60 + 100) / 10 = 34 %.
    const telemetry::Tick t = fold({{{with(9000)}, 2 * k_s},
                                    {{with(1000)}, 6 * k_s},
                                    {{with(std::nullopt)}, 4 * k_s},
                                    {{with(5000)}, 2 * k_s}});
    EXPECT_EQ(t.cards.at(0).readings.sm_active_cpct, 3400);
    EXPECT_EQ(t.cards.at(0).readings.fp16_active_cpct, 0) << "measured idle pipe: 0, not n/a";
    EXPECT_FALSE(t.cards.at(0).readings.sm_occupancy_cpct.has_value()) << "never read: n/a";
    const telemetry::Tick unread = fold({{{with(std::nullopt)}, 5 * k_s}});
    EXPECT_FALSE(unread.cards.at(0).readings.sm_active_cpct.has_value()) << "n/a, not 0";
    const telemetry::Tick next = fold({{{with(2500)}, 5 * k_s}});
    EXPECT_EQ(next.cards.at(0).readings.sm_active_cpct, 2500) << "nothing carried over";
}

// The source's priming poll (before the first tick) gives the counters their baselines: the first
// tick's energy covers it from its start, and the priming poll adds no card-tick of its own.
TEST_F(Fold, APrimingPollIsTheFirstTicksEnergyBaseline) {
    const auto at = [&](const std::string& uuid, std::int64_t mj) {
        telemetry::DevicePoll p = poll(uuid, {{50, 1}});
        p.readings.energy_mj = mj;
        return p;
    };
    m_builder.start(k_t0);
    m_builder.prime({at("GPU-a", 7'000'000), at("GPU-b", 100)});
    m_builder.add_poll({at("GPU-a", 8'500'000)}, 5 * k_s, m_devices);
    m_builder.add_poll({at("GPU-a", 10'000'000)}, 5 * k_s, m_devices);
    const telemetry::Tick t = m_builder.finish(7);
    ASSERT_EQ(t.cards.size(), 1U) << "GPU-b was only primed";
    EXPECT_EQ(t.cards[0].readings.energy_mj, 3'000'000) << "from the priming reading on";
}

// Ghost memory: what the driver counts as used (MemoryInfo_v2, reservation apart) minus what the
// listed processes hold, a pid in two lists once; n/a when any part is unknown.
TEST_F(Fold, GhostMemoryIsUsedMinusWhatProcessesHold) {
    telemetry::DevicePoll p = poll("GPU-a", {{50, 1}});
    p.readings.mem_used_mib = 12000;
    p.readings.mem_reserved_mib = 500;
    p.processes = {reading(1, 8000, std::nullopt),
                   reading(1, 8000, std::nullopt, telemetry::ProcessType::graphics),
                   reading(2, 1000, std::nullopt)};
    EXPECT_EQ(fold({{{p}, 5 * k_s}}).cards.at(0).readings.ghost_mib, 3000);
    telemetry::DevicePoll v1 = p;
    v1.readings.mem_reserved_mib.reset(); // MemoryInfo v1: used includes what the driver keeps
    EXPECT_FALSE(fold({{{v1}, 5 * k_s}}).cards.at(0).readings.ghost_mib.has_value());
    telemetry::DevicePoll unknown = p;
    unknown.processes.push_back(reading(3, std::nullopt, std::nullopt));
    EXPECT_FALSE(fold({{{unknown}, 5 * k_s}}).cards.at(0).readings.ghost_mib.has_value());
    telemetry::DevicePoll unreadable = p;
    unreadable.processes_unknown = true;
    EXPECT_FALSE(fold({{{unreadable}, 5 * k_s}}).cards.at(0).readings.ghost_mib.has_value());
    telemetry::DevicePoll overcounted = p;
    overcounted.readings.mem_used_mib = 5000;
    EXPECT_EQ(fold({{{overcounted}, 5 * k_s}}).cards.at(0).readings.ghost_mib, 0);
    // The latest poll that tells wins.
    EXPECT_EQ(fold({{{p}, 5 * k_s}, {{unknown}, 5 * k_s}}).cards.at(0).readings.ghost_mib, 3000);
}

TEST_F(Fold, DeviceReadingsLatestWinsErrorsAndEventsAccumulate) {
    telemetry::DevicePoll a = poll("GPU-a", {{0, 1}});
    a.readings.power_mw = 100000;
    a.readings.temperature_c = 50;
    a.readings.mem_used_mib = 1000;
    a.readings.clock_events = 0x1;
    a.read_errors = 1;
    telemetry::DevicePoll b = poll("GPU-a", {{0, 1}});
    b.readings.power_mw = 200000;
    b.readings.clock_events = 0x4;
    b.read_errors = 2;
    const telemetry::Tick t = fold({{{a}, 5 * k_s}, {{b}, 5 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.readings.power_mw, 200000);
    EXPECT_EQ(c.readings.temperature_c, 50); // b had no reading: a's stands
    EXPECT_EQ(c.readings.mem_used_mib, 1000);
    EXPECT_EQ(c.readings.clock_events, 0x5);
    EXPECT_EQ(c.read_errors, 3);
}

TEST_F(Fold, CardsAreOrderedByIndexAndStartClearsState) {
    const telemetry::Tick t =
        fold({{{poll("GPU-b", {{0, 1}}), poll("GPU-a", {{100, 1}})}, 10 * k_s}});
    ASSERT_EQ(t.cards.size(), 2U);
    EXPECT_EQ(t.cards[0].device.index, 0);
    EXPECT_EQ(t.cards[1].device.index, 1);
    const telemetry::Tick next = fold({{{poll("GPU-b", {{0, 1}})}, 10 * k_s}});
    ASSERT_EQ(next.cards.size(), 1U);
    EXPECT_EQ(next.duration_us, 10 * k_s);
    EXPECT_EQ(next.cards[0].util_samples, 1U);
}

// The builder fills one Tick tick after tick and copies an identity only when it may differ from
// the one the entry holds: processes that move between card slots must still get their own.
TEST_F(Fold, AReusedTickKeepsEachProcessItsOwnIdentity) {
    identity::Resolver resolver{"/proc"};
    TickBuilder builder{thresholds(), resolver};
    const auto self = static_cast<std::uint32_t>(getpid());
    const auto parent = static_cast<std::uint32_t>(getppid());
    const telemetry::Identity self_identity = resolver.resolve(self).identity;
    const telemetry::Identity parent_identity = resolver.resolve(parent).identity;
    ASSERT_FALSE(self_identity == parent_identity);
    const auto card = [](const std::string& uuid, std::uint32_t pid) {
        telemetry::DevicePoll p = poll(uuid, {{0, 1}});
        telemetry::ProcessReading r = reading(pid, 100, std::nullopt);
        r.identity.reset();
        p.processes = {r};
        return p;
    };
    telemetry::Tick tick;
    const auto fold_into = [&](const std::vector<telemetry::DevicePoll>& polls) {
        builder.start(k_t0);
        builder.add_poll(polls, k_s, m_devices);
        builder.finish(0, tick);
        resolver.sweep();
    };
    fold_into({card("GPU-a", self), card("GPU-b", parent)});
    ASSERT_EQ(tick.cards.size(), 2U);
    EXPECT_EQ(tick.cards[0].processes.at(0).identity, self_identity);
    EXPECT_EQ(tick.cards[1].processes.at(0).identity, parent_identity);
    fold_into({card("GPU-b", parent)}); // GPU-b moves to slot 0
    ASSERT_EQ(tick.cards.size(), 1U);
    EXPECT_EQ(tick.cards[0].processes.at(0).identity, parent_identity);
    fold_into({card("GPU-a", parent), card("GPU-b", self)}); // the processes swap cards
    ASSERT_EQ(tick.cards.size(), 2U);
    EXPECT_EQ(tick.cards[0].processes.at(0).identity, parent_identity);
    EXPECT_EQ(tick.cards[1].processes.at(0).identity, self_identity);
    fold_into({card("GPU-a", parent), card("GPU-b", self)}); // unchanged: nothing copied
    EXPECT_EQ(tick.cards[0].processes.at(0).identity, parent_identity);
    EXPECT_EQ(tick.cards[1].processes.at(0).identity, self_identity);
}

// Per poll, the measured time below the threshold goes to idle_unknown_us when the process list
// could not be read, to idle_unlisted_us when no holder was listed, else stays a held candidate.
TEST_F(Fold, IdleTimeIsSplitByWhatEachPollListed) {
    const auto at = [](double pct, std::vector<telemetry::ProcessReading> procs,
                       bool unknown = false) {
        telemetry::DevicePoll p = poll("GPU-a", {{pct, 1}});
        p.processes = std::move(procs);
        p.processes_unknown = unknown;
        return p;
    };
    // Per 5 s poll: (card %, holders listed, list readable).
    const telemetry::Tick t = fold({
        {{at(0, {reading(1, 4000, std::nullopt)})}, 5 * k_s},       // held candidate
        {{at(0, {reading(1, 4000, std::nullopt)}, true)}, 5 * k_s}, // holders unknown
        {{at(0, {}, true)}, 5 * k_s},                               // holders unknown
        {{at(0, {})}, 5 * k_s},                                     // nobody listed
        {{at(60, {})}, 5 * k_s},                                    // active
        {{at(5, {reading(2, 64, std::nullopt, telemetry::ProcessType::graphics)})},
         5 * k_s}, // a graphics context alone holds nothing by default
    });
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.active_us, 5 * k_s);
    EXPECT_EQ(c.idle_unknown_us, 10 * k_s);
    EXPECT_EQ(c.idle_unlisted_us, 10 * k_s);
    EXPECT_EQ(c.unmeasured_us, 0);
    expect_adds_up(c, 30 * k_s);
}

TEST_F(Fold, GraphicsContextsAreHoldersWhenConfigured) {
    identity::Resolver resolver{"/nonexistent-proc"};
    TickBuilder builder{thresholds(true), resolver};
    telemetry::DevicePoll xorg = poll("GPU-a", {{0, 1}});
    xorg.processes = {reading(2, 4096, std::nullopt, telemetry::ProcessType::graphics)};
    builder.start(k_t0);
    builder.add_poll({xorg}, 5 * k_s, m_devices);
    builder.add_poll({poll("GPU-a", {{0, 1}})}, 5 * k_s, m_devices);
    const telemetry::Tick t = builder.finish(0);
    EXPECT_EQ(t.cards[0].idle_unlisted_us, 5 * k_s);
    // A small one holds no more than the held threshold: its poll is not held either.
    xorg.processes = {reading(2, 64, std::nullopt, telemetry::ProcessType::graphics)};
    builder.start(k_t0);
    builder.add_poll({xorg}, 5 * k_s, m_devices);
    EXPECT_EQ(builder.finish(1).cards[0].idle_unlisted_us, 5 * k_s);
}

// Two holders one after the other with an empty poll between them: the gap is truly idle (no
// holder listed), their own polls stay held candidates.
TEST_F(Fold, AnEmptyGapBetweenTwoHoldersIsUnlisted) {
    const auto at = [](std::vector<telemetry::ProcessReading> procs) {
        telemetry::DevicePoll p = poll("GPU-a", {{0, 1}});
        p.processes = std::move(procs);
        return p;
    };
    const telemetry::Tick t = fold({
        {{at({reading(1, 4000, 0.0)})}, 5 * k_s},
        {{at({reading(1, 4000, 0.0)})}, 5 * k_s},
        {{at({})}, 5 * k_s},
        {{at({})}, 5 * k_s},
        {{at({reading(2, 6000, 0.0)})}, 5 * k_s},
        {{at({reading(2, 6000, 0.0)})}, 5 * k_s},
    });
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.active_us, 0);
    EXPECT_EQ(c.idle_unlisted_us, 10 * k_s);
    EXPECT_EQ(c.idle_unknown_us, 0);
    ASSERT_EQ(c.processes.size(), 2U);
    EXPECT_EQ(c.processes[0].active_us, 0);
    EXPECT_EQ(c.processes[1].active_us, 0);
    expect_adds_up(c, 30 * k_s);
}

// A 30 s tick of six 5 s polls: process A busy at 100 % for the first half, B at 8 % all along,
// the card otherwise cold. B earns active time only in the polls where the card was active, by
// its share of that poll's SM readings; the tick's average shares would give it far more.
TEST_F(Fold, ActiveTimeIsAttributedPollByPoll) {
    struct Slot {
        double card_pct, a_pct, b_pct;
    };
    std::vector<Slot> slots;
    for (int i = 0; i < 6; ++i) {
        slots.push_back(i < 3 ? Slot{100, 100, 8} : Slot{8, 0, 8});
    }
    std::vector<std::pair<std::vector<telemetry::DevicePoll>, DurationUs>> polls;
    for (const Slot& s : slots) {
        telemetry::DevicePoll p = poll("GPU-a", {{s.card_pct, 1}});
        p.processes = {reading(1, 8000, s.a_pct), reading(2, 2000, s.b_pct)};
        polls.push_back({{p}, 5 * k_s});
    }
    // Truth: integrate the slots.
    double truth_card = 0;
    double truth_a = 0;
    double truth_b = 0;
    for (const Slot& s : slots) {
        const double active = s.card_pct >= 10 ? 5e6 : 0;
        truth_card += active;
        truth_a += active * s.a_pct / (s.a_pct + s.b_pct);
        truth_b += active * s.b_pct / (s.a_pct + s.b_pct);
    }
    const telemetry::Tick t = fold(polls);
    const telemetry::CardTickRecord& c = t.cards[0];
    ASSERT_EQ(c.processes.size(), 2U);
    EXPECT_EQ(c.active_us, std::llround(truth_card));
    const telemetry::ProcessTick& a = c.processes[0];
    const telemetry::ProcessTick& b = c.processes[1];
    ASSERT_TRUE(a.active_us && b.active_us);
    EXPECT_NEAR(static_cast<double>(*b.active_us), truth_b, 1.0); // 1.11 s of 15 s: 7.4 %
    EXPECT_NEAR(static_cast<double>(*a.active_us), truth_a, 1.0);
    EXPECT_EQ(*a.active_us + *b.active_us, *c.active_us); // every active µs attributed once
    // The tick's means (A 50 %, B 8 %) would have given B 8/58 of the active time.
    EXPECT_DOUBLE_EQ(b.sm_util_pct.value_or(-1), 8.0);
    EXPECT_DOUBLE_EQ(a.sm_util_pct.value_or(-1), 50.0);
    EXPECT_LT(static_cast<double>(*b.active_us), truth_card * 8 / 58 - 0.9e6);
    // The cold half is held-candidate idle time (both listed), none of it unlisted.
    EXPECT_EQ(c.idle_unlisted_us, 0);
    expect_adds_up(c, 30 * k_s);
}

// Active time of polls without any per-process reading is left to the audit; a process with no
// reading in the whole tick has no active_us at all. Shares that do not divide evenly still add
// up exactly.
TEST_F(Fold, ProcessActiveTimeIsExactAndNeverExceedsTheCards) {
    telemetry::DevicePoll thirds = poll("GPU-a", {{100, 1}});
    thirds.processes = {reading(1, 100, 30.0), reading(2, 100, 30.0), reading(3, 100, 30.0),
                        reading(4, 100, std::nullopt)};
    telemetry::DevicePoll unread = poll("GPU-a", {{100, 1}});
    unread.processes = {reading(1, 100, std::nullopt)};
    const telemetry::Tick t = fold({{{thirds}, 10 * k_s}, {{unread}, 7 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.active_us, 17 * k_s);
    ASSERT_EQ(c.processes.size(), 4U);
    DurationUs sum = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(c.processes[i].active_us.has_value());
        EXPECT_NEAR(static_cast<double>(*c.processes[i].active_us), 10e6 / 3, 1.0);
        sum += *c.processes[i].active_us;
    }
    EXPECT_EQ(sum, 10 * k_s); // the 7 s without readings are not attributed here
    EXPECT_EQ(c.processes[3].active_us, std::nullopt);
    expect_adds_up(c, 17 * k_s);

    // Readings that are all 0 % while the card is active attribute nothing either.
    telemetry::DevicePoll zero = poll("GPU-a", {{100, 1}});
    zero.processes = {reading(1, 100, 0.0)};
    const telemetry::Tick z = fold({{{zero}, 5 * k_s}});
    EXPECT_EQ(z.cards[0].processes.at(0).active_us, 0);
}

// A pid reused within one tick (one user's process exits, another's starts with the same pid)
// gives two processes, each with its own identity, memory and active time; the empty poll
// between them is unlisted idle time. The resolver reads a fake /proc here, rewritten between
// polls as the kernel would show the new process.
TEST_F(Fold, APidReusedWithinATickIsTwoProcesses) {
    identity::testing::FakeProc proc;
    ASSERT_FALSE(proc.root().empty());
    identity::Resolver resolver{proc.root()};
    TickBuilder builder{thresholds(), resolver};
    constexpr std::uint32_t k_pid = 4242;
    identity::testing::FakeProcess first;
    first.start_ticks = 1000;
    first.uid = "61001";
    identity::testing::FakeProcess second = first;
    second.start_ticks = 1500;
    second.uid = "61002";
    const auto at = [&](double pct, std::optional<std::int64_t> mib, std::optional<double> sm) {
        telemetry::DevicePoll p = poll("GPU-a", {{pct, 1}});
        if (mib) {
            telemetry::ProcessReading r = reading(k_pid, mib, sm);
            r.identity.reset(); // resolved through /proc
            p.processes = {r};
        }
        return p;
    };
    builder.start(k_t0);
    proc.write(k_pid, first);
    builder.add_poll({at(100, 3000, 90.0)}, 5 * k_s, m_devices);
    builder.add_poll({at(100, 3000, 90.0)}, 5 * k_s, m_devices);
    proc.remove(k_pid);
    builder.add_poll({at(0, std::nullopt, std::nullopt)}, 5 * k_s, m_devices);
    proc.write(k_pid, second);
    builder.add_poll({at(0, 500, 0.0)}, 5 * k_s, m_devices);
    builder.add_poll({at(50, 700, 40.0)}, 10 * k_s, m_devices);
    const telemetry::Tick t = builder.finish(0);
    const telemetry::CardTickRecord& c = t.cards.at(0);
    ASSERT_EQ(c.processes.size(), 2U);
    const telemetry::ProcessTick& a = c.processes[0];
    const telemetry::ProcessTick& b = c.processes[1];
    EXPECT_EQ(a.pid, k_pid);
    EXPECT_EQ(b.pid, k_pid);
    EXPECT_EQ(a.start_ticks, 1000U);
    EXPECT_EQ(b.start_ticks, 1500U);
    EXPECT_EQ(a.identity.user, "uid:61001");
    EXPECT_EQ(b.identity.user, "uid:61002");
    EXPECT_EQ(a.mem_used_mib, 3000);
    EXPECT_EQ(b.mem_used_mib, 700);
    EXPECT_EQ(a.active_us, 10 * k_s);
    EXPECT_EQ(b.active_us, 10 * k_s);
    EXPECT_DOUBLE_EQ(a.sm_util_pct.value_or(-1), 90.0);
    EXPECT_DOUBLE_EQ(b.sm_util_pct.value_or(-1), 40.0 * 10 / 15);
    EXPECT_EQ(c.active_us, 20 * k_s);
    EXPECT_EQ(c.idle_unlisted_us, 5 * k_s);
    expect_adds_up(c, 30 * k_s);

    // Next tick: only the second process, with the identity it had.
    resolver.sweep();
    builder.start(k_t0 + 30 * k_s);
    builder.add_poll({at(0, 700, 0.0)}, 5 * k_s, m_devices);
    const telemetry::Tick next = builder.finish(1);
    ASSERT_EQ(next.cards.at(0).processes.size(), 1U);
    EXPECT_EQ(next.cards[0].processes[0].start_ticks, 1500U);
    EXPECT_EQ(next.cards[0].processes[0].identity.user, "uid:61002");
}

// A process that exits while the driver still lists its pid keeps its entry and identity.
TEST_F(Fold, AProcessListedAfterItsExitKeepsItsEntry) {
    identity::testing::FakeProc proc;
    ASSERT_FALSE(proc.root().empty());
    identity::Resolver resolver{proc.root(), identity::k_first_person_uid, 0};
    TickBuilder builder{thresholds(), resolver};
    identity::testing::FakeProcess p;
    p.uid = "61001";
    telemetry::DevicePoll listed = poll("GPU-a", {{0, 1}});
    telemetry::ProcessReading r = reading(77, 4000, 0.0);
    r.identity.reset();
    listed.processes = {r};
    builder.start(k_t0);
    proc.write(77, p);
    builder.add_poll({listed}, 5 * k_s, m_devices);
    proc.remove(77);
    builder.add_poll({listed}, 5 * k_s, m_devices);
    const telemetry::Tick t = builder.finish(0);
    ASSERT_EQ(t.cards.at(0).processes.size(), 1U);
    EXPECT_EQ(t.cards[0].processes[0].identity.user, "uid:61001");
    EXPECT_EQ(t.cards[0].processes[0].start_ticks, 1000U);
}

// The same with a real pid reuse on the real /proc: clone3 with set_tid (root only) hands the
// exited process's pid to a process of another uid within the same tick. The resolver notices the
// exit at the next poll, so the new process is resolved afresh.
TEST_F(Fold, ARealPidReusedWithinATickIsTwoProcesses) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "clone3 set_tid needs root";
    }
    identity::Resolver resolver;
    TickBuilder builder{thresholds(), resolver};
    identity::testing::ChildProcess first({"/usr/bin/sleep", "30"});
    ASSERT_TRUE(first.wait_for_comm("sleep"));
    const pid_t pid = first.pid();
    const auto listed = [&] {
        telemetry::DevicePoll p = poll("GPU-a", {{0, 1}});
        telemetry::ProcessReading r = reading(static_cast<std::uint32_t>(pid), 1000, 0.0);
        r.identity.reset();
        p.processes = {r};
        return p;
    };
    builder.start(k_t0);
    builder.add_poll({listed()}, 5 * k_s, m_devices);
    first.stop();
    // A later clock tick of start time than the first process's.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long rc = test::spawn_with_pid(pid, {"/usr/bin/setpriv", "--reuid=54321", "--regid=54321",
                                               "--clear-groups", "/usr/bin/sleep", "30"});
    if (rc < 0) {
        GTEST_SKIP() << "clone3 with set_tid refused: " << std::strerror(errno);
    }
    ASSERT_EQ(rc, pid);
    bool started = false;
    for (int i = 0; i < 1000 && !started; ++i) {
        std::string comm;
        std::ifstream("/proc/" + std::to_string(pid) + "/comm") >> comm;
        started = comm == "sleep";
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    builder.add_poll({listed()}, 5 * k_s, m_devices);
    const telemetry::Tick t = builder.finish(0);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ASSERT_TRUE(started);
    const auto& procs = t.cards.at(0).processes;
    ASSERT_EQ(procs.size(), 2U);
    EXPECT_EQ(procs[0].identity.uid, 0U);
    EXPECT_EQ(procs[1].identity.uid, 54321U);
    EXPECT_EQ(procs[1].identity.user, "uid:54321");
    ASSERT_TRUE(procs[0].start_ticks && procs[1].start_ticks);
    EXPECT_LT(*procs[0].start_ticks, *procs[1].start_ticks);
}

} // namespace fold_test
} // namespace gua::sampler

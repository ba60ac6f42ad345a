// TickBuilder: folding polls into a tick — weighted utilization, bucket times, process merging,
// lost cards and extrapolation of partially unmeasured ticks.
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>

#include <map>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace {

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

class Fold : public ::testing::Test {
  protected:
    identity::Resolver m_resolver{"/nonexistent-proc"};
    TickBuilder m_builder{10.0, m_resolver};
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

TEST_F(Fold, LostCardsAreListedNotRecorded) {
    telemetry::DevicePoll lost = poll("GPU-b", {}, telemetry::UtilSource::none);
    lost.lost = true;
    const telemetry::Tick t =
        fold({{{poll("GPU-a", {{100, 1}}), poll("GPU-b", {{100, 1}})}, 10 * k_s},
              {{poll("GPU-a", {{100, 1}}), lost}, 10 * k_s}});
    ASSERT_EQ(t.cards.size(), 1U);
    EXPECT_EQ(t.cards[0].device.uuid, "GPU-a");
    EXPECT_EQ(t.lost_uuids, std::vector<std::string>{"GPU-b"});
}

TEST_F(Fold, PartiallyUnmeasuredTickIsExtrapolated) {
    // 10 s measured at 100 %, then 20 s without a reading: the measured share stands for the tick.
    const telemetry::Tick t = fold({{{poll("GPU-a", {{100, 1}})}, 10 * k_s},
                                    {{poll("GPU-a", {}, telemetry::UtilSource::none)}, 20 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(t.duration_us, 30 * k_s);
    EXPECT_EQ(c.active_us, 30 * k_s);
    EXPECT_DOUBLE_EQ(*c.util_pct, 100.0);
    EXPECT_EQ(c.bucket_us[3], 30 * k_s);

    const telemetry::Tick half =
        fold({{{poll("GPU-a", {{100, 1}, {0, 1}})}, 10 * k_s},
              {{poll("GPU-a", {}, telemetry::UtilSource::none)}, 10 * k_s}});
    EXPECT_EQ(half.cards[0].active_us, 10 * k_s);
    EXPECT_EQ(half.cards[0].bucket_us[0], 10 * k_s);
}

TEST_F(Fold, UnmeasuredTickHasNoUtilization) {
    const telemetry::Tick t = fold({{{poll("GPU-a", {}, telemetry::UtilSource::none)}, 10 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.util_source, telemetry::UtilSource::none);
    EXPECT_EQ(c.active_us, std::nullopt);
    EXPECT_EQ(c.util_pct, std::nullopt);
    const std::array<DurationUs, 4> zero{};
    EXPECT_EQ(c.bucket_us, zero);
    // A source that claims samples but delivers none is unmeasured too.
    const telemetry::Tick empty = fold({{{poll("GPU-a", {})}, 10 * k_s}});
    EXPECT_EQ(empty.cards[0].active_us, std::nullopt);
}

TEST_F(Fold, DeviceReadingsLatestWinsErrorsAndEventsAccumulate) {
    telemetry::DevicePoll a = poll("GPU-a", {{0, 1}});
    a.power_mw = 100000;
    a.temperature_c = 50;
    a.mem_used_mib = 1000;
    a.clock_event_reasons = 0x1;
    a.read_errors = 1;
    telemetry::DevicePoll b = poll("GPU-a", {{0, 1}});
    b.power_mw = 200000;
    b.clock_event_reasons = 0x4;
    b.read_errors = 2;
    const telemetry::Tick t = fold({{{a}, 5 * k_s}, {{b}, 5 * k_s}});
    const telemetry::CardTickRecord& c = t.cards[0];
    EXPECT_EQ(c.power_mw, 200000);
    EXPECT_EQ(c.temperature_c, 50); // b had no reading: a's stands
    EXPECT_EQ(c.mem_used_mib, 1000);
    EXPECT_EQ(c.clock_event_reasons, 0x5U);
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
    TickBuilder builder{10.0, resolver};
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

} // namespace
} // namespace gua::sampler

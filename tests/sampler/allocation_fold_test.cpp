// SPDX-License-Identifier: Apache-2.0
// The allocation crossing of card-ticks: segments that change inside a poll span, unknown
// stretches, a source that fails mid-run, MIG instances, unmeasured and holders-unknown polls.
// Expected figures are integrated from each scenario by hand.
#include "alloc/timeline.hpp"
#include "audit/classify.hpp"
#include "audit/from_tick.hpp"
#include "audit/window.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace allocation_fold_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_ms = k_us_per_ms;

/// A source answering from a Timeline of readings the test records (as the real ones do).
class FakeSource final : public alloc::AllocationSource {
  public:
    explicit FakeSource(DurationUs grace = 3600 * k_s) : m_timeline(grace) {}
    std::string describe() const override { return "fake"; }
    std::vector<alloc::Segment> query(const alloc::CardQuery& card, TimeUs begin,
                                      TimeUs end) const override {
        ++m_queries;
        return m_timeline.query(card, begin, end);
    }
    void forget_before(TimeUs before) override { m_timeline.forget_before(before); }
    void record(TimeUs at, alloc::Snapshot s) { m_timeline.record(at, std::move(s)); }
    mutable int m_queries = 0;

  private:
    alloc::Timeline m_timeline;
};

/// A device source that only names MIG instances' GPU-instance ids.
class MigNames final : public telemetry::DeviceSource {
  public:
    std::string driver_version() override { return ""; }
    std::vector<telemetry::DeviceInfo> devices() override { return {}; }
    std::vector<telemetry::DevicePoll> poll(TimeUs) override { return {}; }
    std::optional<unsigned> gpu_instance_of(const std::string& uuid) const override {
        if (uuid == "MIG-1") {
            return 1U;
        }
        if (uuid == "MIG-2") {
            return 2U;
        }
        return std::nullopt;
    }
};

alloc::Allocation job(const std::string& id, const std::string& user = "alice") {
    return alloc::Allocation{alloc::AllocationKind::slurm_job, id, user, "physics"};
}

alloc::Snapshot allocated(unsigned index, const alloc::Allocation& a,
                          std::optional<unsigned> gi = std::nullopt) {
    alloc::Snapshot s;
    s.entries.push_back({alloc::DeviceRef{index, gi, ""}, a});
    return s;
}

alloc::Snapshot unreadable() {
    alloc::Snapshot s;
    s.readable = false;
    s.error = "mapping directory unreadable";
    return s;
}

telemetry::ProcessReading holder(std::int64_t mib) {
    telemetry::ProcessReading r;
    r.pid = 7;
    r.mem_used_mib = mib;
    r.sm_util_pct = 0.0;
    telemetry::Identity who;
    who.user = "bob";
    r.identity = who;
    return r;
}

/// One poll of card `uuid` at `pct` % listing `procs`.
telemetry::DevicePoll at(double pct, std::vector<telemetry::ProcessReading> procs = {},
                         const std::string& uuid = "GPU-a") {
    telemetry::DevicePoll p;
    p.uuid = uuid;
    p.util_source = telemetry::UtilSource::samples;
    p.util = {{pct, 1}};
    p.processes = std::move(procs);
    return p;
}

class AllocationFoldTest : public ::testing::Test {
  protected:
    identity::Resolver m_resolver{"/nonexistent-proc"};
    TickBuilder m_builder{audit::Thresholds{}, m_resolver};
    FakeSource m_source;
    MigNames m_names;
    std::unordered_map<std::string, telemetry::DeviceInfo> m_devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}},
        {"MIG-1", telemetry::DeviceInfo{"MIG-1", 1, "Card B 1g.10gb", 9984, "", "GPU-b"}},
        {"MIG-2", telemetry::DeviceInfo{"MIG-2", 1, "Card B 1g.10gb", 9984, "", "GPU-b"}}};

    void SetUp() override { m_builder.set_allocations(&m_source, &m_names); }

    /// Six 5 s polls (one per entry, each a list of cards) make one 30 s tick from `t0`.
    telemetry::Tick fold(const std::vector<std::vector<telemetry::DevicePoll>>& polls,
                         TimeUs t0 = k_t0) {
        m_builder.start(t0);
        for (const auto& p : polls) {
            m_builder.add_poll(p, 5 * k_s, m_devices);
        }
        return m_builder.finish(0);
    }

    static audit::StateTimes states(const telemetry::Tick& tick, std::size_t card = 0) {
        return audit::classify(audit::to_card_tick(tick, tick.cards.at(card)), audit::Thresholds{});
    }
};

// Busy 10 s, idle held 10 s, idle not held 10 s; job 42 holds the card from 2.5 s to 22.5 s,
// edges inside the first and fifth poll spans: each takes its share of that span.
TEST_F(AllocationFoldTest, SegmentsChangingInsideASpanCrossInProportion) {
    m_source.record(k_t0 - 60 * k_s, alloc::Snapshot{});
    m_source.record(k_t0 + 2500 * k_ms, allocated(0, job("42")));
    m_source.record(k_t0 + 22500 * k_ms, alloc::Snapshot{});
    const auto h = holder(4000);
    const telemetry::Tick tick =
        fold({{at(100)}, {at(100)}, {at(0, {h})}, {at(0, {h})}, {at(0)}, {at(0)}});
    const telemetry::AllocationTimes& a = tick.cards.at(0).allocation;
    EXPECT_EQ(a.allocated_us, 20 * k_s);
    EXPECT_EQ(a.active_us, 7500 * k_ms); // 2.5 s of the first poll, all of the second
    EXPECT_EQ(a.idle_held_us, 10 * k_s);
    EXPECT_EQ(a.unused_us, 2500 * k_ms); // the first 2.5 s of the fifth poll
    EXPECT_EQ(a.unknown_us, 0);
    EXPECT_EQ(a.unknown_idle_us, 0);
    ASSERT_EQ(tick.cards.at(0).allocations.size(), 1U);
    const telemetry::AllocationOwner& o = tick.cards.at(0).allocations.at(0);
    EXPECT_EQ(o.kind, "slurm-job");
    EXPECT_EQ(o.id, "42");
    EXPECT_EQ(o.user, "alice");
    EXPECT_EQ(o.account, "physics");
    EXPECT_EQ(o.begin, k_t0 + 2500 * k_ms);
    EXPECT_EQ(o.end, k_t0 + 22500 * k_ms);
    const audit::StateTimes s = states(tick);
    EXPECT_EQ(s.active, 10 * k_s);
    EXPECT_EQ(s.idle_held, 10 * k_s);
    EXPECT_EQ(s.allocated_unused, 2500 * k_ms);
    EXPECT_EQ(s.truly_idle, 7500 * k_ms);
    EXPECT_EQ(s.unmeasured, 0);
}

// A card allocated all tick and idle without holders is allocated-unused, all of it.
TEST_F(AllocationFoldTest, WholeTickAllocatedIdleIsAllocatedUnused) {
    m_source.record(k_t0 - 60 * k_s, allocated(0, job("7")));
    const telemetry::Tick tick = fold({{at(0)}, {at(0)}, {at(0)}, {at(0)}, {at(0)}, {at(0)}});
    const telemetry::AllocationTimes& a = tick.cards.at(0).allocation;
    EXPECT_EQ(a.allocated_us, 30 * k_s);
    EXPECT_EQ(a.unused_us, 30 * k_s);
    const audit::StateTimes s = states(tick);
    EXPECT_EQ(s.allocated_unused, 30 * k_s);
    EXPECT_EQ(s.truly_idle, 0);
}

// Two jobs share the card, one ending mid-tick; two owners in time order, each its own overlap.
TEST_F(AllocationFoldTest, SharedCardListsEveryOwner) {
    alloc::Snapshot both = allocated(0, job("1"));
    both.entries.push_back({alloc::DeviceRef{0U, std::nullopt, ""}, job("2", "carol")});
    m_source.record(k_t0 - 60 * k_s, both);
    m_source.record(k_t0 + 12 * k_s, allocated(0, job("2", "carol")));
    const telemetry::Tick tick = fold({{at(50)}, {at(50)}, {at(50)}, {at(50)}, {at(50)}, {at(50)}});
    const auto& owners = tick.cards.at(0).allocations;
    ASSERT_EQ(owners.size(), 2U);
    EXPECT_EQ(owners[0].id, "1");
    EXPECT_EQ(owners[0].begin, k_t0);
    EXPECT_EQ(owners[0].end, k_t0 + 12 * k_s);
    EXPECT_EQ(owners[1].id, "2");
    EXPECT_EQ(owners[1].begin, k_t0);
    EXPECT_EQ(owners[1].end, k_t0 + 30 * k_s);
    EXPECT_EQ(tick.cards.at(0).allocation.allocated_us, 30 * k_s);
    EXPECT_EQ(tick.cards.at(0).allocation.active_us, 30 * k_s);
}

// The source becomes unreadable 15 s into the tick: idle time not held from then on is
// unknown (unmeasured), never truly idle; the held poll stays idle-held.
TEST_F(AllocationFoldTest, SourceFailingMidRunIsUnknownNeverTrulyIdle) {
    m_source.record(k_t0 - 60 * k_s, alloc::Snapshot{});
    m_source.record(k_t0 + 15 * k_s, unreadable());
    const auto h = holder(4000);
    const telemetry::Tick tick = fold({{at(0)}, {at(0)}, {at(0)}, {at(0, {h})}, {at(0)}, {at(0)}});
    const telemetry::AllocationTimes& a = tick.cards.at(0).allocation;
    EXPECT_EQ(a.allocated_us, 0);
    EXPECT_EQ(a.unknown_us, 15 * k_s);
    EXPECT_EQ(a.unknown_idle_us, 10 * k_s); // polls 5 and 6; poll 4 was held
    const audit::StateTimes s = states(tick);
    EXPECT_EQ(s.truly_idle, 15 * k_s); // the first 15 s, read as unallocated
    EXPECT_EQ(s.idle_held, 5 * k_s);
    EXPECT_EQ(s.unmeasured, 10 * k_s);
    EXPECT_EQ(s.allocated_unused, 0);
    // Flagged as allocation unknown (the report's data coverage), not as unknown process lists.
    audit::WindowAccumulator acc(audit::Thresholds{}, 0, [](TimeUs) { return std::pair{0, 0}; });
    acc.add(audit::to_card_tick(tick, tick.cards.at(0)));
    EXPECT_EQ(acc.gpus().at(0).provenance.allocation_unknown_us, 10 * k_s);
    EXPECT_EQ(acc.gpus().at(0).provenance.holders_unknown_us, 0);
    // The next tick, still unreadable: every idle second is unmeasured.
    const telemetry::Tick next =
        fold({{at(0)}, {at(0)}, {at(0)}, {at(0)}, {at(0)}, {at(0)}}, k_t0 + 30 * k_s);
    EXPECT_EQ(next.cards.at(0).allocation.unknown_us, 30 * k_s);
    const audit::StateTimes n = states(next);
    EXPECT_EQ(n.truly_idle, 0);
    EXPECT_EQ(n.unmeasured, 30 * k_s);
}

// A source with a short confirmation grace that stops answering: stalled time is unknown.
TEST(AllocationFoldStall, StalledSourceIsUnknown) {
    identity::Resolver resolver{"/nonexistent-proc"};
    TickBuilder builder{audit::Thresholds{}, resolver};
    FakeSource source(10 * k_s);
    source.record(k_t0, allocated(0, job("9")));
    builder.set_allocations(&source, nullptr);
    std::unordered_map<std::string, telemetry::DeviceInfo> devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};
    builder.start(k_t0);
    for (int i = 0; i < 6; ++i) {
        builder.add_poll({at(0)}, 5 * k_s, devices);
    }
    const telemetry::Tick tick = builder.finish(0);
    const telemetry::AllocationTimes& a = tick.cards.at(0).allocation;
    EXPECT_EQ(a.allocated_us, 10 * k_s);
    EXPECT_EQ(a.unused_us, 10 * k_s);
    EXPECT_EQ(a.unknown_us, 20 * k_s);
    EXPECT_EQ(a.unknown_idle_us, 20 * k_s);
}

// An allocated card without a utilization reading is unmeasured, never allocated-unused; an
// allocated cold card whose process list failed leaves its holders unknown.
TEST_F(AllocationFoldTest, NoReadingOrUnknownHoldersIsNeverAllocatedUnused) {
    m_source.record(k_t0 - 60 * k_s, allocated(0, job("5")));
    telemetry::DevicePoll none = at(0);
    none.util_source = telemetry::UtilSource::none;
    none.util.clear();
    telemetry::DevicePoll unknown = at(0);
    unknown.processes_unknown = true;
    const telemetry::Tick tick = fold({{none}, {none}, {unknown}, {unknown}, {at(0)}, {at(0)}});
    const telemetry::AllocationTimes& a = tick.cards.at(0).allocation;
    EXPECT_EQ(a.allocated_us, 30 * k_s);
    EXPECT_EQ(a.unused_us, 10 * k_s); // only the two polls measured idle with holders known
    const audit::StateTimes s = states(tick);
    EXPECT_EQ(s.unmeasured, 20 * k_s);
    EXPECT_EQ(s.allocated_unused, 10 * k_s);
    EXPECT_EQ(s.truly_idle, 0);
}

// MIG: "1.2" allocates only GPU instance 2 of card 1; a plain "1" would cover both. Instances
// have no utilization reading: allocated time is recorded, none of it allocated-unused.
TEST_F(AllocationFoldTest, MigInstancesAreQueriedOneByOne) {
    m_source.record(k_t0 - 60 * k_s, allocated(1, job("77"), 2U));
    telemetry::DevicePoll m1 = at(0, {}, "MIG-1");
    m1.util_source = telemetry::UtilSource::none;
    m1.util.clear();
    telemetry::DevicePoll m2 = m1;
    m2.uuid = "MIG-2";
    const std::vector<telemetry::DevicePoll> poll{m1, m2};
    const telemetry::Tick tick = fold({poll, poll, poll, poll, poll, poll});
    ASSERT_EQ(tick.cards.size(), 2U);
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const bool second = c.device.uuid == "MIG-2";
        EXPECT_EQ(c.allocation.allocated_us, second ? 30 * k_s : 0) << c.device.uuid;
        EXPECT_EQ(c.allocation.unused_us, 0);
        EXPECT_EQ(c.allocations.size(), second ? 1U : 0U);
    }
    // The whole card allocated covers both instances.
    m_source.record(k_t0 + 30 * k_s, allocated(1, job("78")));
    const telemetry::Tick whole = fold({poll, poll, poll, poll, poll, poll}, k_t0 + 30 * k_s);
    for (const telemetry::CardTickRecord& c : whole.cards) {
        EXPECT_EQ(c.allocation.allocated_us, 30 * k_s) << c.device.uuid;
        ASSERT_EQ(c.allocations.size(), 1U);
        EXPECT_EQ(c.allocations[0].id, "78");
    }
}

// Without a source the card-tick carries no allocation: as before allocations existed.
TEST(AllocationFoldOff, NoSourceNoAllocation) {
    identity::Resolver resolver{"/nonexistent-proc"};
    TickBuilder builder{audit::Thresholds{}, resolver};
    std::unordered_map<std::string, telemetry::DeviceInfo> devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};
    builder.start(k_t0);
    builder.add_poll({at(0)}, 30 * k_s, devices);
    const telemetry::Tick tick = builder.finish(0);
    EXPECT_FALSE(tick.cards.at(0).allocation.any());
    EXPECT_TRUE(tick.cards.at(0).allocations.empty());
}

} // namespace allocation_fold_test
} // namespace gua::sampler

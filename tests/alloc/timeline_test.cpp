// SPDX-License-Identifier: Apache-2.0
// Timeline and composite: readings → per-card segments, MIG matching, unknown vs unallocated.
#include "alloc/source.hpp"
#include "alloc/timeline.hpp"

#include <gtest/gtest.h>

namespace gua::alloc {
namespace timeline_test {

constexpr TimeUs k_s = k_us_per_second;

DeviceRef index_ref(unsigned index, std::optional<unsigned> gi = std::nullopt) {
    DeviceRef ref;
    ref.index = index;
    ref.gpu_instance = gi;
    return ref;
}

Allocation job(const std::string& id) {
    return Allocation{AllocationKind::slurm_job, id, "alice", "physics"};
}

Snapshot with(std::vector<std::pair<DeviceRef, Allocation>> entries) {
    Snapshot snapshot;
    snapshot.entries = std::move(entries);
    return snapshot;
}

Snapshot unreadable(std::string why) {
    Snapshot snapshot;
    snapshot.readable = false;
    snapshot.error = std::move(why);
    return snapshot;
}

Segment segment(TimeUs begin, TimeUs end, AllocationState state,
                std::vector<Allocation> allocations = {}, std::string reason = {}) {
    return Segment{begin, end, state, std::move(allocations), std::move(reason)};
}

CardQuery card(unsigned index, std::optional<unsigned> gi = std::nullopt) {
    CardQuery query;
    query.index = index;
    query.gpu_instance = gi;
    return query;
}

TEST(AllocTimeline, EdgesInsideTheSpanAreKeptWhereTheyHappened) {
    Timeline timeline(3 * k_s);
    timeline.record(100 * k_s, Snapshot{});
    timeline.record(112 * k_s + 250'000, with({{index_ref(0), job("42")}}));
    timeline.record(118 * k_s, Snapshot{});
    timeline.confirm(130 * k_s);
    const auto got = timeline.query(card(0), 110 * k_s, 125 * k_s);
    const std::vector<Segment> want = {
        segment(110 * k_s, 112 * k_s + 250'000, AllocationState::unallocated),
        segment(112 * k_s + 250'000, 118 * k_s, AllocationState::allocated, {job("42")}),
        segment(118 * k_s, 125 * k_s, AllocationState::unallocated)};
    EXPECT_EQ(got, want);
    // Card 1 was never named: unallocated over the whole span, in one piece.
    EXPECT_EQ(timeline.query(card(1), 110 * k_s, 125 * k_s),
              std::vector<Segment>{segment(110 * k_s, 125 * k_s, AllocationState::unallocated)});
}

TEST(AllocTimeline, BeforeTheFirstReadingAndAfterTheGraceIsUnknown) {
    Timeline timeline(3 * k_s);
    EXPECT_EQ(
        timeline.query(card(0), 0, 10 * k_s),
        std::vector<Segment>{segment(0, 10 * k_s, AllocationState::unknown, {}, "no reading yet")});
    timeline.record(5 * k_s, Snapshot{});
    timeline.confirm(20 * k_s);
    const std::vector<Segment> want = {
        segment(0, 5 * k_s, AllocationState::unknown, {}, "no reading yet"),
        segment(5 * k_s, 23 * k_s, AllocationState::unallocated),
        segment(23 * k_s, 30 * k_s, AllocationState::unknown, {}, "source stalled")};
    EXPECT_EQ(timeline.query(card(0), 0, 30 * k_s), want);
}

TEST(AllocTimeline, AnUnreadableSourceIsUnknownNeverUnallocated) {
    Timeline timeline(3 * k_s);
    timeline.record(0, with({{index_ref(2), job("7")}}));
    timeline.record(10 * k_s, unreadable("mapping directory /x: Permission denied"));
    timeline.record(20 * k_s, Snapshot{});
    timeline.confirm(30 * k_s);
    const std::vector<Segment> want = {segment(0, 10 * k_s, AllocationState::allocated, {job("7")}),
                                       segment(10 * k_s, 20 * k_s, AllocationState::unknown, {},
                                               "mapping directory /x: Permission denied"),
                                       segment(20 * k_s, 30 * k_s, AllocationState::unallocated)};
    EXPECT_EQ(timeline.query(card(2), 0, 30 * k_s), want);
}

TEST(AllocTimeline, MigInstancesAndWholeCards) {
    Timeline timeline(3 * k_s);
    // Card 0 in MIG mode: instance 1 held by job 5; card 1 allocated whole to job 6.
    timeline.record(0, with({{index_ref(0, 1), job("5")}, {index_ref(1), job("6")}}));
    timeline.confirm(10 * k_s);
    const auto state = [&](CardQuery q) { return timeline.query(q, 0, 10 * k_s).at(0); };
    EXPECT_EQ(state(card(0, 1)).allocations, std::vector<Allocation>{job("5")});
    EXPECT_EQ(state(card(0, 2)).state, AllocationState::unallocated);
    EXPECT_EQ(state(card(1, 3)).allocations, std::vector<Allocation>{job("6")});
    EXPECT_EQ(state(card(1)).allocations, std::vector<Allocation>{job("6")});
}

TEST(AllocTimeline, UuidsMatchCardsAndInstances) {
    DeviceRef gpu;
    gpu.uuid = "GPU-aaaa";
    DeviceRef mig;
    mig.uuid = "MIG-bbbb";
    CardQuery whole = card(3);
    whole.uuid = "GPU-aaaa";
    CardQuery instance = card(4, 2);
    instance.uuid = "GPU-cccc";
    instance.mig_uuid = "MIG-bbbb";
    EXPECT_TRUE(whole.matches(gpu));
    EXPECT_FALSE(whole.matches(mig));
    EXPECT_TRUE(instance.matches(mig));
    EXPECT_FALSE(instance.matches(gpu));
    CardQuery other_instance = instance;
    other_instance.gpu_instance = 3;
    other_instance.mig_uuid = "MIG-dddd";
    EXPECT_FALSE(other_instance.matches(mig));
}

TEST(AllocTimeline, ForgettingKeepsTheReadingInEffect) {
    Timeline timeline(3 * k_s);
    timeline.record(0, Snapshot{});
    timeline.record(10 * k_s, with({{index_ref(0), job("1")}}));
    timeline.record(20 * k_s, Snapshot{});
    timeline.confirm(40 * k_s);
    timeline.forget_before(15 * k_s);
    EXPECT_EQ(timeline.size(), 2U);
    EXPECT_EQ(
        timeline.query(card(0), 15 * k_s, 25 * k_s),
        (std::vector<Segment>{segment(15 * k_s, 20 * k_s, AllocationState::allocated, {job("1")}),
                              segment(20 * k_s, 25 * k_s, AllocationState::unallocated)}));
}

// A source answering from a fixed timeline (the composite's inputs).
class FixedSource final : public AllocationSource {
  public:
    explicit FixedSource(Timeline timeline) : m_timeline(std::move(timeline)) {}
    std::string describe() const override { return "fixed"; }
    std::vector<Segment> query(const CardQuery& c, TimeUs b, TimeUs e) const override {
        return m_timeline.query(c, b, e);
    }
    void forget_before(TimeUs) override {}

  private:
    Timeline m_timeline;
};

TEST(AllocComposite, AllocatedWinsThenUnknownThenUnallocated) {
    Timeline slurm(3 * k_s);
    slurm.record(0, Snapshot{});
    slurm.record(10 * k_s, with({{index_ref(0), job("9")}}));
    slurm.record(20 * k_s, Snapshot{});
    slurm.confirm(60 * k_s);
    Timeline kube(3 * k_s);
    kube.record(0, Snapshot{});
    kube.record(15 * k_s, unreadable("kubelet gone"));
    kube.record(30 * k_s, Snapshot{});
    kube.confirm(60 * k_s);
    std::vector<std::unique_ptr<AllocationSource>> sources;
    sources.push_back(std::make_unique<FixedSource>(slurm));
    sources.push_back(std::make_unique<FixedSource>(kube));
    const auto both = make_composite_source(std::move(sources));
    const std::vector<Segment> want = {
        segment(0, 10 * k_s, AllocationState::unallocated),
        segment(10 * k_s, 20 * k_s, AllocationState::allocated, {job("9")}),
        segment(20 * k_s, 30 * k_s, AllocationState::unknown, {}, "kubelet gone"),
        segment(30 * k_s, 40 * k_s, AllocationState::unallocated)};
    EXPECT_EQ(both->query(card(0), 0, 40 * k_s), want);
}

} // namespace timeline_test
} // namespace gua::alloc

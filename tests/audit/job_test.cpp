// SPDX-License-Identifier: Apache-2.0
// JobAccumulator: a job's per-card split from hand-built card-ticks, with jobs that share a tick.
#include "audit/job.hpp"

#include <gtest/gtest.h>

namespace gua::audit::job_test {

constexpr DurationUs k_s = 1'000'000;

/// A 30 s card-tick at `t0` of card `gpu`, whose allocation times are `active`, `held`, `unused`
/// seconds, owned by `owners` (allocation index, overlap in seconds).
CardTick tick(std::uint32_t gpu, TimeUs t0, int active, int held, int unused,
              std::vector<std::pair<std::uint32_t, int>> owners, double util_pct = 50) {
    CardTick t;
    t.gpu = gpu;
    t.t0 = t0;
    t.duration_us = 30 * k_s;
    t.active_us = active * k_s;
    t.idle_unlisted_us = unused * k_s; // idle and not held: allocated-unused below
    if (held > 0) {                    // a holder whose idle-held time the sampler decided
        t.processes.push_back(
            ProcTick{0, telemetry::ProcessType::compute, 1024, 0.0, {}, held * k_s});
    }
    t.util_pct = util_pct;
    t.allocation.active_us = active * k_s;
    t.allocation.idle_held_us = held * k_s;
    t.allocation.unused_us = unused * k_s;
    t.allocation.allocated_us = (active + held + unused) * k_s;
    for (const auto& [index, seconds] : owners) {
        t.allocations.push_back(AllocationShare{index, seconds * k_s});
    }
    t.readings.energy_mj = 30 * 300 * 1000; // 300 W for 30 s
    return t;
}

TEST(Job, TwoCardsOneNeverActiveAndATickSharedWithTheNextJob) {
    JobAccumulator acc({7}, Thresholds{});
    // GPU 0: two whole ticks (20 s active, 10 s held), then 10 s of a third tick, which the next
    // job (index 8) holds for its last 20 s; the third tick's 30 s are all active.
    acc.add(tick(0, 0, 20, 10, 0, {{7, 30}}));
    acc.add(tick(0, 30 * k_s, 20, 10, 0, {{7, 30}}));
    acc.add(tick(0, 60 * k_s, 30, 0, 0, {{7, 10}, {8, 20}}, 90));
    // GPU 1: allocated and unused for two ticks; a tick of another job alone is not counted.
    acc.add(tick(1, 0, 0, 0, 30, {{7, 30}}, 0));
    acc.add(tick(1, 30 * k_s, 0, 0, 30, {{7, 30}}, 0));
    acc.add(tick(1, 60 * k_s, 30, 0, 0, {{8, 30}}, 100));
    const JobSummary job = acc.finish();

    ASSERT_EQ(job.cards.size(), 2u);
    const JobCard& g0 = job.cards[0];
    EXPECT_EQ(g0.allocated_us, 70 * k_s);          // 30 + 30 + 10
    EXPECT_EQ(g0.active_us, (20 + 20 + 10) * k_s); // the shared tick by overlap: 30 × 10/30
    EXPECT_EQ(g0.idle_held_us, 20 * k_s);
    EXPECT_EQ(g0.unused_us, 0);
    // Mean SM weighted by measured time: (50 × 30 + 50 × 30 + 90 × 10) / 70.
    EXPECT_NEAR(*g0.mean_sm_pct, (50.0 * 60 + 90.0 * 10) / 70.0, 1e-9);
    EXPECT_DOUBLE_EQ(*g0.peak_sm_pct, 90);
    // Energy: 9,000 J per whole tick, the shared tick's third.
    EXPECT_NEAR(*g0.energy_j, 9000.0 * 2 + 3000.0, 1e-6);

    const JobCard& g1 = job.cards[1];
    EXPECT_EQ(g1.allocated_us, 60 * k_s);
    EXPECT_EQ(g1.unused_us, 60 * k_s);
    EXPECT_FALSE(g1.used());
    EXPECT_EQ(job.used_cards(), 1u);
    EXPECT_EQ(job.total.allocated_us, 130 * k_s);
    EXPECT_EQ(job.total.unused_us + job.total.idle_held_us + job.total.active_us, 130 * k_s);

    const std::vector<std::string> notes = job_notes(job, {});
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0], "used 1 of 2 allocated GPUs: ask for 1 (--gres=gpu:1)");
    // Blocked: 20 s held + 60 s unused of 130 s.
    EXPECT_EQ(notes[1], "idle-held 15 % and allocated-unused 46 % of its allocated GPU time (the "
                        "20 % rule)");
}

TEST(Job, SharedCardsSplitByOverlapSoJobsNeverDoubleCount) {
    // Two jobs share one card for a whole tick (a shared GPU): each takes half of each part.
    JobAccumulator a({1}, Thresholds{});
    JobAccumulator b({2}, Thresholds{});
    const CardTick t = tick(0, 0, 10, 20, 0, {{1, 30}, {2, 30}});
    a.add(t);
    b.add(t);
    const JobSummary ja = a.finish();
    const JobSummary jb = b.finish();
    EXPECT_EQ(ja.total.active_us + jb.total.active_us, 10 * k_s);
    EXPECT_EQ(ja.total.idle_held_us + jb.total.idle_held_us, 20 * k_s);
    EXPECT_EQ(ja.total.allocated_us, 15 * k_s);
}

TEST(Job, SlicesOfASharedTickClassifyAsEachJobsPart) {
    // The shared tick of the test above, and a tick job 1 ends 12 s into: each job's slice is a
    // card-tick of its own that classifies into exactly the job's part, all allocated to it.
    const std::vector<CardTick> ticks{tick(0, 0, 10, 20, 0, {{1, 30}, {2, 30}}),
                                      tick(0, 30 * k_s, 6, 0, 6, {{1, 12}})};
    for (const std::uint32_t job : {1u, 2u}) {
        JobAccumulator acc({job}, Thresholds{});
        const JobSlicer slicer({job}, Thresholds{}, 0);
        StateTimes sliced;
        DurationUs duration = 0;
        for (const CardTick& t : ticks) {
            acc.add(t);
            CardTick s;
            if (slicer.slice(t, s)) {
                sliced += classify(s, Thresholds{});
                duration += s.duration_us;
                EXPECT_GE(s.t0, t.t0);
                EXPECT_LE(s.t0 + s.duration_us, t.t0 + t.duration_us);
                EXPECT_EQ(s.allocation.allocated_us, s.duration_us);
                ASSERT_EQ(s.allocations.size(), 1u);
                EXPECT_EQ(s.allocations[0].allocation, job);
            }
        }
        const JobCard total = acc.finish().total;
        EXPECT_EQ(duration, total.allocated_us) << "job " << job;
        EXPECT_EQ(sliced.active, total.active_us) << "job " << job;
        EXPECT_EQ(sliced.idle_held, total.idle_held_us) << "job " << job;
        EXPECT_EQ(sliced.allocated_unused, total.unused_us) << "job " << job;
        EXPECT_EQ(sliced.truly_idle, 0) << "job " << job;
        EXPECT_EQ(sliced.unmeasured, total.unmeasured_us) << "job " << job;
    }
    // Job 1: half of the shared tick (5 s active, 10 s held) and all of the 12 s it held the
    // second tick (6 s active, 6 s unused).
    JobAccumulator one({1}, Thresholds{});
    for (const CardTick& t : ticks) {
        one.add(t);
    }
    const JobCard j1 = one.finish().total;
    EXPECT_EQ(j1.allocated_us, 27 * k_s);
    EXPECT_EQ(j1.active_us, 11 * k_s);
    EXPECT_EQ(j1.idle_held_us, 10 * k_s);
    EXPECT_EQ(j1.unused_us, 6 * k_s);
    // A tick without the job has no slice.
    CardTick none;
    EXPECT_FALSE(JobSlicer({3}, Thresholds{}, 0).slice(ticks[0], none));
}

TEST(Job, SmallPeakMemorySuggestsTheSmallestMigSlice) {
    JobAccumulator acc({0}, Thresholds{});
    CardTick t = tick(0, 0, 30, 0, 0, {{0, 30}});
    t.processes.push_back(ProcTick{0, telemetry::ProcessType::compute, 9 * 1024, 90.0, {}, {}});
    acc.add(t);
    const JobSummary job = acc.finish();
    const auto notes = job_notes(job, {{0, JobCardModel{"NVIDIA H100 80GB HBM3", 81559}}});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0], "peak memory 9.0 GiB of 79.6 GiB on GPU 0 — a 1g.10gb MIG slice would do");
}

TEST(Job, SmallestMigSliceMatchesThePublishedProfiles) {
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA A100-SXM4-40GB", 40536), 5);  // 1g.5gb
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA A100-SXM4-80GB", 81920), 10); // 1g.10gb
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA A30", 24576), 6);             // 1g.6gb
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA H100 NVL", 95830), 12);       // 1g.12gb
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA H200", 143771), 18);          // 1g.18gb
    EXPECT_EQ(smallest_mig_slice_gib("NVIDIA GeForce RTX 4090", 24564), std::nullopt);
}

} // namespace gua::audit::job_test

// SPDX-License-Identifier: Apache-2.0
// The report's note on the driver's sample period: present when much of the time measured from
// sample buffers lay in periods busy only 10–70 %, absent for demo data, snapshots and steady work.
#include "report/shares.hpp"

#include <gtest/gtest.h>

namespace gua::report::sample_period_note_test {
namespace {

ProvenanceShares from_rings() {
    ProvenanceShares p;
    p.samples = 1.0;
    return p;
}

std::vector<std::string> notes_for(const ProvenanceShares& p, std::array<double, 4> buckets,
                                   bool demo = false) {
    std::vector<std::string> notes;
    add_sample_period_note(p, buckets, demo, notes);
    return notes;
}

TEST(SamplePeriodNote, BurstsShorterThanThePeriodAreNamed) {
    // 0.2 s bursts every 2 s on a 1/6 s ring: each burst fills one period and 20 % of the next.
    const auto notes = notes_for(from_rings(), {0.85, 0.05, 0.0, 0.10});
    EXPECT_TRUE(notes.empty()) << "a twentieth of the time: too little to matter";
    const auto many = notes_for(from_rings(), {0.6, 0.3, 0.0, 0.1});
    ASSERT_EQ(many.size(), 1u);
    EXPECT_EQ(many[0], "30.0% of the measured card time lay in driver sample periods busy only "
                       "10-70% of the time: work in bursts shorter than the driver's sample "
                       "period (1/6 s to 1 s) counts as active for the whole period, so active "
                       "time is rounded up (docs/measurement.md)");
}

TEST(SamplePeriodNote, NotForSteadyWorkSnapshotsOrDemoData) {
    EXPECT_TRUE(notes_for(from_rings(), {0.1, 0.15, 0.05, 0.7}).empty()) << "mostly whole periods";
    ProvenanceShares snapshots;
    snapshots.snapshot = 1.0;
    EXPECT_TRUE(notes_for(snapshots, {0.6, 0.3, 0.0, 0.1}).empty()) << "no ring, no ring period";
    EXPECT_TRUE(notes_for(from_rings(), {0.6, 0.3, 0.0, 0.1}, true).empty()) << "demo data";
}

} // namespace
} // namespace gua::report::sample_period_note_test

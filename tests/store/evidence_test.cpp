// The evidence BLOB of rollup rows: frozen field numbers, zero fields left out, provenance since
// schema 4 and none before it.
#include "store/evidence.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace gua::store {
namespace {

/// The 9-byte entry (number, little-endian bits) a field must have on disk.
std::string entry(unsigned char number, std::uint64_t bits) {
    std::string e(1, static_cast<char>(number));
    for (int k = 0; k < 8; ++k) {
        e.push_back(static_cast<char>((bits >> (8 * k)) & 0xFF));
    }
    return e;
}

TEST(Evidence, RoundTripsEveryFieldAndSkipsZeros) {
    audit::GpuTotals totals;
    EXPECT_TRUE(encode_evidence(totals).empty()) << "an idle card costs nothing";
    for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
        totals.pools[p] = 0.5 + static_cast<double>(p);
    }
    audit::CardProfile& profile = totals.profile;
    profile.office_us = 1;
    profile.off_hours_us = 2;
    profile.steady_us = 3;
    profile.bursty_us = 4;
    profile.steady_under_us = 5;
    profile.steady_compute_bound_us = 6;
    profile.bursty_bucket_us = {7, 8, 9, 10};
    profile.bursty_util_us = 11.25;
    profile.steady_under_util_us = 12.5;
    profile.steady_compute_bound_util_us = 13.75;
    profile.active_held_mib_us = 1e18;
    profile.steady_under_held_mib_us = 15.0;
    profile.idle_held_mib_us = -16.0;
    totals.provenance.by_source_us = {17, 18, 19, 20};
    totals.provenance.util_unknown_us = 21;
    totals.provenance.holders_unknown_us = 22;
    const std::string blob = encode_evidence(totals);
    EXPECT_EQ(blob.size(), 30U * 9U);
    audit::GpuTotals back;
    back.ticks = 99;
    decode_evidence(blob, back);
    EXPECT_EQ(back.ticks, 99U) << "members outside the BLOB are left alone";
    EXPECT_EQ(back.pools, totals.pools);
    EXPECT_EQ(back.profile.office_us, 1);
    EXPECT_EQ(back.profile.steady_compute_bound_us, 6);
    EXPECT_EQ(back.profile.bursty_bucket_us, profile.bursty_bucket_us);
    EXPECT_EQ(back.profile.bursty_util_us, 11.25);
    EXPECT_EQ(back.profile.active_held_mib_us, 1e18);
    EXPECT_EQ(back.profile.idle_held_mib_us, -16.0);
    EXPECT_EQ(back.provenance, totals.provenance);
    decode_evidence(blob.substr(0, 13), back);
    EXPECT_EQ(back.pools[0], 0.5) << "a truncated tail is ignored";
    EXPECT_EQ(back.pools[1], 0.0);
}

TEST(Evidence, FieldNumbersAreFrozen) {
    audit::GpuTotals totals;
    totals.pools[7] = 2.0;
    totals.profile.idle_held_mib_us = 3.0;
    totals.provenance.by_source_us[2] = 1000;
    totals.provenance.holders_unknown_us = 7;
    std::uint64_t two = 0;
    std::uint64_t three = 0;
    const double d2 = 2.0;
    const double d3 = 3.0;
    std::memcpy(&two, &d2, 8);
    std::memcpy(&three, &d3, 8);
    EXPECT_EQ(encode_evidence(totals),
              entry(7, two) + entry(23, three) + entry(26, 1000) + entry(29, 7));
}

TEST(Evidence, BlobFromBeforeSchema4HasNoProvenance) {
    // A schema 3 BLOB: pool 0 and the office time only (numbers 0 and 8).
    const std::string old = entry(0, 0x4000000000000000ULL) + entry(8, 3600000000ULL);
    audit::GpuTotals back;
    back.provenance.util_unknown_us = 5;
    decode_evidence(old, back);
    EXPECT_EQ(back.pools[0], 2.0);
    EXPECT_EQ(back.profile.office_us, 3600000000LL);
    EXPECT_EQ(back.provenance, audit::Provenance{}) << "restored as not recorded";
    decode_evidence(entry(200, 1) + entry(9, 5), back);
    EXPECT_EQ(back.profile.off_hours_us, 5) << "an unknown field number is skipped";
}

TEST(Evidence, HealthTotalsHaveFrozenNumbersAndOldBlobsHaveNone) {
    audit::GpuTotals totals;
    audit::EnergyTotals& e = totals.health.energy;
    e.counter_mj = 11;
    e.counter_us = 12;
    e.power_mj = 13;
    e.power_us = 14;
    e.state_mj = {15, 16, 17, 18};
    EXPECT_EQ(encode_evidence(totals), entry(32, 11) + entry(33, 12) + entry(34, 13) +
                                           entry(35, 14) + entry(36, 15) + entry(37, 16) +
                                           entry(38, 17) + entry(39, 18));
    audit::GpuTotals back;
    decode_evidence(encode_evidence(totals), back);
    EXPECT_EQ(back.health, totals.health);
    audit::GpuTotals clocks;
    clocks.health.throttle.events_active_us = 40;
    clocks.health.throttle.reason_active_us = {41, 42, 43, 44, 45, 46};
    clocks.health.throttle.clock_active_us = 47;
    clocks.health.throttle.clock_mhz_ms = 48;
    clocks.health.throttle.max_clock_mhz_ms = 49;
    std::string expected;
    for (unsigned char n = 40; n < 50; ++n) {
        expected += entry(n, n);
    }
    EXPECT_EQ(encode_evidence(clocks), expected);
    audit::GpuTotals memory;
    memory.health.memory = audit::MemoryTotals{50, 51, 52, 53, 54, 55};
    expected.clear();
    for (unsigned char n = 50; n < 56; ++n) {
        expected += entry(n, n);
    }
    EXPECT_EQ(encode_evidence(memory), expected);
    // A BLOB written before the health totals: energy unknown (no covered time), not 0 J of it.
    decode_evidence(entry(26, 1000), back);
    EXPECT_EQ(back.health, audit::HealthTotals{});
    EXPECT_EQ(back.health.energy.known_us(), 0);
}

TEST(Evidence, IdentityHealthRoundTripsWithItsOwnNumbers) {
    audit::IdentityTotals totals;
    EXPECT_TRUE(encode_identity_evidence(totals).empty());
    totals.health.energy_mj = 7'000'000;
    totals.health.energy_us = 30'000'000;
    EXPECT_EQ(encode_identity_evidence(totals), entry(0, 7'000'000) + entry(1, 30'000'000));
    audit::IdentityTotals back;
    back.active_us = 5;
    decode_identity_evidence(encode_identity_evidence(totals), back);
    EXPECT_EQ(back.health, totals.health);
    EXPECT_EQ(back.active_us, 5) << "only the health totals come from the BLOB";
    decode_identity_evidence("", back); // a row written before schema 8 (NULL)
    EXPECT_EQ(back.health, audit::IdentityHealth{});
}

} // namespace
} // namespace gua::store

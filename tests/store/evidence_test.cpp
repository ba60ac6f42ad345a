// SPDX-License-Identifier: Apache-2.0
// The evidence BLOB of rollup rows: frozen field numbers, zero fields left out, provenance since
// schema 4 and none before it, the compact format of schema 9 and the (number, 8 bytes) entries
// before it, every value back with the same bits.
#include "evidence_bytes.hpp"
#include "store/evidence.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace gua::store {
namespace {

using testing::is_card_double;
using testing::legacy_entry;
using testing::read_compact;

/// The 9-byte entry (number, little-endian bits) a field had on disk before schema 9.
std::string entry(unsigned char number, std::uint64_t bits) {
    return legacy_entry(number, bits);
}

std::uint64_t bits_of(double d) {
    return std::bit_cast<std::uint64_t>(d);
}

std::string bytes(std::initializer_list<unsigned> values) {
    std::string out;
    for (const unsigned v : values) {
        out.push_back(static_cast<char>(v));
    }
    return out;
}

TEST(Evidence, RoundTripsEveryFieldAndSkipsZeros) {
    audit::GpuTotals totals;
    EXPECT_TRUE(encode_evidence(totals).empty()) << "an idle card costs nothing";
    // The eight pools of fields 0–7 (the allocated-unused pool, field 91, is in the property
    // test: a field of a later group would not fit this test's size bound).
    for (std::size_t p = 0; p < 8; ++p) {
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
    EXPECT_LT(blob.size(), 30U * 9U / 2) << "small integers take a byte or two, not 9";
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
    // Header: marker, group mask 0x0F (fields 0–29 in groups 0–3), four presence bytes; then the
    // pools: 0.5 is no integer, so raw (kind 3 and 8 bytes).
    decode_evidence(blob.substr(0, 6 + 9 + 3), back);
    EXPECT_EQ(back.pools[0], 0.5) << "a truncated tail is ignored";
    EXPECT_EQ(back.pools[1], 0.0);
}

TEST(Evidence, CompactFormatIsFrozen) {
    // Hand-encoded from docs/schema.md: fields 4 (0.5), 7 (2.0), 9 (3.6e9 µs), 23 (3.0), 25
    // (3.6e9 again), 26 and 27 (1000 twice), 29 (7).
    audit::GpuTotals totals;
    totals.pools[4] = 0.5;
    totals.pools[7] = 2.0;
    totals.profile.off_hours_us = 3'600'000'000;
    totals.profile.idle_held_mib_us = 3.0;
    totals.provenance.by_source_us = {0, 3'600'000'000, 1000, 1000};
    totals.provenance.holders_unknown_us = 7;
    const std::string expected = bytes({
        0x89,                                        // compact format
        0x0F,                                        // groups 0–3 (fields 0–31) have fields
        0x90, 0x02, 0x80, 0x2E,                      // present: 4, 7 | 9 | 23 | 25, 26, 27, 29
        0x03, 0,    0,    0,    0, 0, 0, 0xE0, 0x3F, // 4: kind 3, the bits of 0.5
        0x10,                                        // 7: kind 0, zigzag(2) = 4
        0x9E, 0x24, // 9: kind 2, 36 × 10^8: (zigzag(36) << 4 | 7) << 2 | 2
        0x18,       // 23: zigzag(3) = 6
        0x05,       // 25: kind 1, the integer one before the latest
        0xC0, 0x3E, // 26: zigzag(1000) << 2 (no shorter as 1 × 10^3)
        0x01,       // 27: kind 1, the latest integer
        0x38,       // 29: zigzag(7) << 2
    });
    EXPECT_EQ(encode_evidence(totals), expected);
    audit::GpuTotals back;
    decode_evidence(expected, back);
    EXPECT_EQ(back.pools, totals.pools);
    EXPECT_EQ(back.profile.off_hours_us, 3'600'000'000);
    EXPECT_EQ(back.profile.idle_held_mib_us, 3.0);
    EXPECT_EQ(back.provenance, totals.provenance);
}

TEST(Evidence, EveryValueComesBackWithItsBits) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> doubles{-0.0,    nan,    std::numeric_limits<double>::denorm_min(),
                                      1e300,   -1e300, 0x1p62,
                                      -0x1p63, 0x1p63, 123456789.125,
                                      1e16,    -3.0,   1.0 / 3.0};
    const std::vector<std::int64_t> integers{std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max(),
                                             -1,
                                             1,
                                             (std::int64_t{1} << 61) - 1,
                                             std::int64_t{1} << 61,
                                             -(std::int64_t{1} << 61),
                                             9'000'000'000'000'000'000,
                                             -7'000'000'000'000'000'000,
                                             1'000'000'000'000'000'000,
                                             3'600'000'000};
    for (std::size_t shift = 0; shift < doubles.size(); ++shift) {
        audit::GpuTotals totals;
        for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
            totals.pools[p] = doubles[(p + shift) % doubles.size()];
        }
        totals.profile.active_held_mib_us = doubles[shift];
        totals.profile.office_us = integers[shift % integers.size()];
        totals.profile.off_hours_us = integers[(shift + 1) % integers.size()];
        totals.health.memory.ghost_first_us = integers[(shift + 2) % integers.size()];
        totals.health.memory.ghost_last_end_us = totals.health.memory.ghost_first_us;
        totals.health.load[19] = integers[(shift + 3) % integers.size()];
        const std::string blob = encode_evidence(totals);
        const auto fields = read_compact(blob, is_card_double);
        ASSERT_TRUE(fields) << "one well-formed BLOB";
        audit::GpuTotals back;
        decode_evidence(blob, back);
        for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
            EXPECT_EQ(bits_of(back.pools[p]), bits_of(totals.pools[p])) << p;
            EXPECT_EQ(fields->count(static_cast<unsigned>(p)), bits_of(totals.pools[p]) != 0);
        }
        EXPECT_EQ(bits_of(back.profile.active_held_mib_us),
                  bits_of(totals.profile.active_held_mib_us));
        EXPECT_EQ(fields->at(21), bits_of(totals.profile.active_held_mib_us));
        EXPECT_EQ(back.profile.office_us, totals.profile.office_us);
        EXPECT_EQ(back.profile.off_hours_us, totals.profile.off_hours_us);
        EXPECT_EQ(fields->at(9), static_cast<std::uint64_t>(totals.profile.off_hours_us));
        EXPECT_EQ(back.health, totals.health);
    }
}

TEST(Evidence, RepeatedAndRoundValuesCostABitOrTwo) {
    // A quiet card-hour: the hour's 3.6e9 µs measured, truly idle, by the driver's samples, with
    // memory and ghost memory read, and its energy from the counter (all of it truly idle).
    audit::GpuTotals idle;
    const DurationUs hour = 3'600'000'000;
    idle.pools[3] = static_cast<double>(hour);
    idle.profile.off_hours_us = hour;
    idle.provenance.by_source_us[2] = hour;
    idle.health.energy.counter_mj = 216'345'219;
    idle.health.energy.counter_us = hour;
    idle.health.energy.state_mj[2] = idle.health.energy.counter_mj;
    idle.health.memory.known_us = hour;
    idle.health.memory.ghost_known_us = hour;
    // Marker, group mask (groups 0, 1, 3, 4, 6: one byte), 5 presence bytes; 3.6e9 once as
    // 36 × 10^8 (2 bytes) and 5 copies (fields 9, 26, 33, 50, 52: 1 byte each); the energy in 5
    // bytes (zigzag of a 28-bit value and 2 kind bits: 31 bits), its copy (field 38) 1 byte. The
    // format before schema 9 took 8 × 9 = 72 bytes.
    EXPECT_EQ(encode_evidence(idle).size(), 1U + 1 + 5 + 2 + 5 + 5 + 1);
    audit::GpuTotals back;
    decode_evidence(encode_evidence(idle), back);
    EXPECT_EQ(back.pools, idle.pools);
    EXPECT_EQ(back.profile.off_hours_us, hour);
    EXPECT_EQ(back.provenance, idle.provenance);
    EXPECT_EQ(back.health, idle.health);
}

RC_GTEST_PROP(EvidenceProperty, RandomTotalsComeBackBitForBit, ()) {
    // Values as rollups hold them: zero, whole ticks and hours, repeats, fractions, anything.
    const auto value = [] {
        return *rc::gen::oneOf(rc::gen::just<std::int64_t>(0),
                               rc::gen::map(rc::gen::inRange(0, 121),
                                            [](int t) { return t * std::int64_t{30'000'000}; }),
                               rc::gen::just<std::int64_t>(3'600'000'000),
                               rc::gen::inRange<std::int64_t>(-1000, 1000),
                               rc::gen::arbitrary<std::int64_t>());
    };
    const auto real = [&] {
        return *rc::gen::oneOf(
            rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                         [](std::uint64_t b) { return std::bit_cast<double>(b); }),
            rc::gen::just(static_cast<double>(value())),
            rc::gen::just(static_cast<double>(value()) / 7.0));
    };
    audit::GpuTotals totals;
    for (double& p : totals.pools) {
        p = real();
    }
    totals.profile.office_us = value();
    totals.profile.steady_under_us = totals.profile.office_us;
    totals.profile.bursty_util_us = real();
    totals.profile.idle_held_mib_us = real();
    totals.provenance.by_source_us = {value(), value(), value(), value()};
    totals.overlap_us = value();
    totals.health.energy.counter_mj = value();
    totals.health.energy.state_mj = {value(), value(), totals.health.energy.counter_mj, value()};
    totals.health.throttle.clock_mhz_ms = value();
    totals.health.memory.ghost_first_us = value();
    for (DurationUs& bin : totals.health.load) {
        bin = value();
    }
    const std::string blob = encode_evidence(totals);
    audit::GpuTotals back;
    decode_evidence(blob, back);
    for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
        RC_ASSERT(bits_of(back.pools[p]) == bits_of(totals.pools[p]));
    }
    RC_ASSERT(back.profile.office_us == totals.profile.office_us);
    RC_ASSERT(back.profile.steady_under_us == totals.profile.steady_under_us);
    RC_ASSERT(bits_of(back.profile.bursty_util_us) == bits_of(totals.profile.bursty_util_us));
    RC_ASSERT(bits_of(back.profile.idle_held_mib_us) == bits_of(totals.profile.idle_held_mib_us));
    RC_ASSERT(back.provenance == totals.provenance);
    RC_ASSERT(back.overlap_us == totals.overlap_us);
    RC_ASSERT(back.health == totals.health);
    // The independent reader agrees, and the old format of the same fields reads the same.
    const auto fields = read_compact(blob, is_card_double);
    RC_ASSERT(fields.has_value());
    audit::GpuTotals old;
    decode_evidence(testing::legacy_blob(*fields), old);
    RC_ASSERT(encode_evidence(old) == blob);
    RC_ASSERT(recode_evidence(testing::legacy_blob(*fields)) == blob);
    // Every prefix decodes without reading past its end, each field whole or zero.
    for (std::size_t n = 0; n < blob.size(); ++n) {
        audit::GpuTotals part;
        decode_evidence(std::string_view(blob).substr(0, n), part);
        RC_ASSERT(part.overlap_us == 0 || part.overlap_us == totals.overlap_us);
        for (std::size_t b = 0; b < audit::k_load_bins; ++b) {
            RC_ASSERT(part.health.load[b] == 0 || part.health.load[b] == totals.health.load[b]);
        }
    }
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
    const std::string legacy = entry(7, two) + entry(23, three) + entry(26, 1000) + entry(29, 7);
    EXPECT_EQ(read_compact(encode_evidence(totals), is_card_double),
              (testing::EvidenceFields{{7, two}, {23, three}, {26, 1000}, {29, 7}}));
    audit::GpuTotals back;
    decode_evidence(legacy, back); // as gua wrote it before schema 9
    EXPECT_EQ(back.pools, totals.pools);
    EXPECT_EQ(back.profile.idle_held_mib_us, 3.0);
    EXPECT_EQ(back.provenance, totals.provenance);
    EXPECT_EQ(recode_evidence(legacy), encode_evidence(totals));
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

/// Fields numbered [first, end), each holding its own number.
testing::EvidenceFields numbered(unsigned first, unsigned end) {
    testing::EvidenceFields out;
    for (unsigned n = first; n < end; ++n) {
        out[n] = n;
    }
    return out;
}

TEST(Evidence, HealthTotalsHaveFrozenNumbersAndOldBlobsHaveNone) {
    audit::GpuTotals totals;
    audit::EnergyTotals& e = totals.health.energy;
    e.counter_mj = 32;
    e.counter_us = 33;
    e.power_mj = 34;
    e.power_us = 35;
    e.state_mj = {36, 37, 38, 39};
    EXPECT_EQ(read_compact(encode_evidence(totals), is_card_double), numbered(32, 40));
    audit::GpuTotals back;
    decode_evidence(encode_evidence(totals), back);
    EXPECT_EQ(back.health, totals.health);
    decode_evidence(testing::legacy_blob(numbered(32, 40)), back);
    EXPECT_EQ(back.health, totals.health) << "the same numbers before schema 9";
    audit::GpuTotals clocks;
    clocks.health.throttle.events_active_us = 40;
    clocks.health.throttle.reason_active_us = {41, 42, 43, 44, 45, 46};
    clocks.health.throttle.clock_active_us = 47;
    clocks.health.throttle.clock_mhz_ms = 48;
    clocks.health.throttle.max_clock_mhz_ms = 49;
    EXPECT_EQ(read_compact(encode_evidence(clocks), is_card_double), numbered(40, 50));
    decode_evidence(testing::legacy_blob(numbered(40, 50)), back);
    EXPECT_EQ(back.health, clocks.health);
    audit::GpuTotals memory;
    memory.health.memory = audit::MemoryTotals{50, 51, 52, 53, 54, 55};
    for (std::size_t b = 0; b < audit::k_load_bins; ++b) {
        memory.health.load[b] = static_cast<DurationUs>(56 + b);
    }
    EXPECT_EQ(read_compact(encode_evidence(memory), is_card_double), numbered(50, 76));
    decode_evidence(testing::legacy_blob(numbered(50, 76)), back);
    EXPECT_EQ(back.health, memory.health);
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
    // 7 × 10^6 and 3 × 10^7, both kind 2: (zigzag(m) << 4 | k − 1) << 2 | 2.
    EXPECT_EQ(encode_identity_evidence(totals), bytes({0x89, 0x01, 0x03, 0x96, 0x07, 0x9A, 0x03}));
    audit::IdentityTotals back;
    back.active_us = 5;
    decode_identity_evidence(encode_identity_evidence(totals), back);
    EXPECT_EQ(back.health, totals.health);
    EXPECT_EQ(back.active_us, 5) << "only the health totals come from the BLOB";
    const std::string legacy = entry(0, 7'000'000) + entry(1, 30'000'000);
    decode_identity_evidence(legacy, back); // as gua wrote it before schema 9
    EXPECT_EQ(back.health, totals.health);
    EXPECT_EQ(recode_identity_evidence(legacy), encode_identity_evidence(totals));
    for (std::size_t b = 0; b < audit::k_load_bins; ++b) {
        totals.health.load[b] = static_cast<DurationUs>(2 + b);
    }
    testing::EvidenceFields all = numbered(2, 22); // the load bins
    all[0] = 7'000'000;
    all[1] = 30'000'000;
    EXPECT_EQ(read_compact(encode_identity_evidence(totals), testing::no_doubles), all);
    decode_identity_evidence("", back); // a row written before schema 8 (NULL)
    EXPECT_EQ(back.health, audit::IdentityHealth{});
}

} // namespace
} // namespace gua::store

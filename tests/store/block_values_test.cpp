// SPDX-License-Identifier: Apache-2.0
// Tick blocks whose stored values are out of any real range (found by fuzz_block): the decoder
// rejects them as damaged instead of overflowing 64-bit time arithmetic; a per-card reading that
// cannot be scaled is left unknown.
#include "store/block.hpp"
#include "store/codec.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace gua::store {
namespace block_values_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;
constexpr DurationUs k_tick = 30 * k_us_per_second;

telemetry::Tick idle_tick(TimeUs t0) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = k_tick;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "A100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 0;
    c.active_us = 0;
    c.bucket_us = {k_tick, 0, 0, 0};
    c.idle_unlisted_us = k_tick;
    c.readings.power_mw = 250000;
    t.cards.push_back(c);
    return t;
}

/// A two-tick block of one idle card whose stream `s` holds `values` instead.
BlockRow block_with(Stream s, const std::vector<std::uint64_t>& values) {
    BlockBuilder b;
    b.start(1, BlockLayout{{1}, {}}, idle_tick(k_start));
    b.append(idle_tick(k_start + k_tick));
    BlockRow row = b.row();
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        row.streams[i] = b.stream(i);
    }
    codec::StreamWriter w;
    w.clear();
    for (const std::uint64_t v : values) {
        w.append(v);
    }
    row.streams[static_cast<std::size_t>(s)] = w.text();
    return row;
}

TEST(BlockValues, TimesAndPowerOutOfRangeAreDamageNotOverflow) {
    DecodedTicks out;
    // The same streams with ordinary values decode: the test can tell the two apart.
    ASSERT_TRUE(decode_block(block_with(Stream::t0_delta, {0, 0}), out));
    ASSERT_TRUE(decode_block(block_with(Stream::unmeasured_us, {0, 5}), out));
    ASSERT_TRUE(
        decode_block(block_with(static_cast<Stream>(stream_of(k_power_field)), {250, 300}), out));
    ASSERT_EQ(out.ticks.size(), 6U);
    EXPECT_EQ(out.ticks[3].unmeasured_us, 5);
    EXPECT_EQ(out.ticks[5].readings.power_mw, 300000);

    const std::uint64_t far = codec::zigzag(std::int64_t{1} << 62);
    const std::uint64_t min = codec::zigzag(std::numeric_limits<std::int64_t>::min());
    EXPECT_FALSE(decode_block(block_with(Stream::t0_delta, {0, far}), out));
    EXPECT_FALSE(decode_block(block_with(Stream::dur_delta, {min, 0}), out));
    // 2^63 read as a signed duration was INT64_MIN: duration − unmeasured overflowed.
    EXPECT_FALSE(decode_block(block_with(Stream::unmeasured_us, {0, std::uint64_t{1} << 63}), out));
    EXPECT_FALSE(
        decode_block(block_with(Stream::idle_unknown_us, {std::uint64_t{1} << 62, 0}), out));
    BlockRow far_start = block_with(Stream::t0_delta, {0, 0});
    far_start.t0_us = std::numeric_limits<TimeUs>::max() - 10;
    EXPECT_FALSE(decode_block(far_start, out));
    EXPECT_EQ(out.ticks.size(), 6U) << "rejected blocks add nothing";

    // A per-card reading that overflows once scaled (2^61 W in milliwatts) is one damaged value:
    // that reading is unknown, the rest of the block stands.
    ASSERT_TRUE(decode_block(
        block_with(static_cast<Stream>(stream_of(k_power_field)), {250, std::uint64_t{1} << 61}),
        out));
    ASSERT_EQ(out.ticks.size(), 8U);
    EXPECT_EQ(out.ticks[6].readings.power_mw, 250000);
    EXPECT_FALSE(out.ticks[7].readings.power_mw.has_value());
    EXPECT_EQ(out.ticks[7].duration_us, k_tick);
}

} // namespace block_values_test
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Where blocks close when cards are allocated: an allocation edge on a card (its slot keeps every
// code, the edge tick six times) no longer closes blocks earlier than without allocations, and
// allocations that change on every card every tick still close a block near its size limit.
#include "store/block.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gua::store {
namespace block_allocation_size_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // an hour boundary
constexpr DurationUs k_tick = 10 * k_us_per_second;
constexpr int k_cards = 12;
constexpr int k_ticks = 360; // the hour
// What the allocation streams may add beyond BlockBuilder::k_max_bytes before they count.
constexpr std::size_t k_allowance = 128;

enum class Allocations { none, one_edge, churn };

/// Tick `k` of 12 idle cards whose power, clock and temperature change every tick (so blocks
/// close on size, a few times an hour): with `one_edge`, card 3 is allocated until 7 s into
/// tick 40; with `churn`, every card is allocated for a different part of every tick.
telemetry::Tick tick(int k, Allocations allocations) {
    telemetry::Tick t;
    t.seq = static_cast<std::uint64_t>(k);
    t.t0 = k_start + k * k_tick;
    t.duration_us = k_tick;
    for (int c = 0; c < k_cards; ++c) {
        telemetry::CardTickRecord card;
        card.device.uuid = "GPU-" + std::to_string(c);
        card.util_source = telemetry::UtilSource::samples;
        card.util_pct = 0;
        card.active_us = 0;
        card.bucket_us = {k_tick, 0, 0, 0};
        card.idle_unlisted_us = k_tick;
        const int mix = k * 7919 + c * 104'729;
        card.readings.power_mw = 60'000 + (mix % 240) * 1000;
        card.readings.sm_clock_mhz = 1410 + mix % 570;
        card.readings.temperature_c = 30 + mix % 50;
        if (allocations == Allocations::one_edge && c == 3 && k <= 40) {
            const DurationUs d = k < 40 ? k_tick : 7 * k_us_per_second;
            card.allocation = telemetry::AllocationTimes{d, 0, 0, d, 0, 0};
        } else if (allocations == Allocations::churn) {
            const DurationUs d = ((k * 31 + c * 17) % 9 + 1) * k_us_per_second;
            card.allocation = telemetry::AllocationTimes{d, 0, 0, d, 0, 0};
        }
        t.cards.push_back(card);
    }
    return t;
}

struct Block {
    std::int64_t ticks = 0;
    std::size_t bytes = 0; ///< layout and streams
    std::size_t allocation_bytes = 0;
};

/// The blocks a builder makes of the hour.
std::vector<Block> blocks(Allocations allocations) {
    BlockLayout layout;
    for (int c = 0; c < k_cards; ++c) {
        layout.gpus.push_back(c + 1);
    }
    BlockBuilder builder;
    std::vector<Block> out;
    const auto close = [&] {
        Block b{builder.row().n_ticks, builder.row().cards.size() + builder.row().procs.size()};
        for (std::size_t s = 0; s < k_stream_count; ++s) {
            b.bytes += builder.stream(s).size();
        }
        b.allocation_bytes = builder.stream(static_cast<std::size_t>(Stream::alloc_shape)).size() +
                             builder.stream(static_cast<std::size_t>(Stream::alloc_us)).size();
        out.push_back(b);
    };
    for (int k = 0; k < k_ticks; ++k) {
        const telemetry::Tick t = tick(k, allocations);
        if (builder.fits(layout, t.t0)) {
            builder.append(t);
            continue;
        }
        if (!builder.empty()) {
            close();
        }
        builder.start(1, layout, t);
    }
    close();
    return out;
}

std::vector<std::int64_t> lengths(const std::vector<Block>& b) {
    std::vector<std::int64_t> out;
    for (const Block& x : b) {
        out.push_back(x.ticks);
    }
    return out;
}

TEST(BlockAllocationSize, AnAllocationEdgeClosesBlocksWhereTheyCloseWithoutAllocations) {
    const std::vector<Block> plain = blocks(Allocations::none);
    const std::vector<Block> edge = blocks(Allocations::one_edge);
    ASSERT_GE(plain.size(), 3U); // the hour closes on size, not only at its end
    EXPECT_EQ(lengths(edge), lengths(plain));
    std::size_t with_edge = 0;
    for (const Block& b : edge) {
        with_edge += b.allocation_bytes > 20 ? 1 : 0; // more than a code per slot and a header
        EXPECT_LE(b.allocation_bytes, k_allowance);
    }
    EXPECT_EQ(with_edge, 1U);
}

TEST(BlockAllocationSize, AllocationsChangingEveryTickStillCloseBlocksNearTheLimit) {
    const std::vector<Block> plain = blocks(Allocations::none);
    const std::vector<Block> churn = blocks(Allocations::churn);
    EXPECT_GT(churn.size(), plain.size());
    for (std::size_t i = 0; i + 1 < churn.size(); ++i) { // the last one ends with the hour
        // One tick at most past the limit: 12 cards × (a code and six times of 2 digits).
        EXPECT_GE(churn[i].bytes, BlockBuilder::k_max_bytes + k_allowance) << i;
        EXPECT_LT(churn[i].bytes, BlockBuilder::k_max_bytes + k_allowance + 12 * 40) << i;
    }
}

} // namespace block_allocation_size_test
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Tick blocks: what the writer stores reads back unchanged (after the documented quantisation),
// through the C++ decoder and through the administrator views.
#include "random_ticks.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace gua::store {
namespace {

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

RunInfo run_info() {
    return RunInfo{"test", "1", "test", 30 * k_us_per_second, 10.0, k_start};
}

std::vector<StoredCardTick> scan_all(Database& db, DecodedTicks& all) {
    BlockScanner scanner(db);
    scanner.scan(k_time_min, k_time_max, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            StoredCardTick copy = t;
            copy.proc_begin = static_cast<std::uint32_t>(all.procs.size());
            all.procs.insert(all.procs.end(), d.procs.begin() + t.proc_begin,
                             d.procs.begin() + t.proc_begin + t.proc_count);
            all.ticks.push_back(copy);
        }
    });
    return all.ticks;
}

TEST(Blocks, RoundTripThroughWriterAndDecoder) {
    testing::TempDb t;
    testing::RandomHistoryOptions o;
    o.quantised = true;
    o.clock_steps = false;
    o.ticks = 600;
    const auto history = testing::random_history(11, k_start, o);
    {
        Writer w(t.db, run_info());
        for (const telemetry::Tick& tick : history) {
            w.write(tick);
        }
        w.finish(history.back().t0);
    }
    std::map<std::string, std::int64_t> gpu_ids;
    for (const GpuRow& g : Reader(t.db).gpus()) {
        gpu_ids[g.uuid] = g.id;
    }
    struct Expected {
        const telemetry::Tick* tick;
        const telemetry::CardTickRecord* card;
        std::int64_t gpu;
    };
    std::vector<Expected> expected;
    for (const telemetry::Tick& tick : history) {
        for (const telemetry::CardTickRecord& c : tick.cards) {
            expected.push_back(Expected{&tick, &c, gpu_ids.at(c.device.uuid)});
        }
    }
    std::stable_sort(expected.begin(), expected.end(), [](const Expected& a, const Expected& b) {
        return a.tick->t0 != b.tick->t0 ? a.tick->t0 < b.tick->t0 : a.gpu < b.gpu;
    });
    DecodedTicks all;
    const std::vector<StoredCardTick> got = scan_all(t.db, all);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const StoredCardTick& g = got[i];
        const telemetry::CardTickRecord& c = *expected[i].card;
        ASSERT_EQ(g.t0, expected[i].tick->t0) << i;
        ASSERT_EQ(g.duration_us, expected[i].tick->duration_us) << i;
        ASSERT_EQ(g.gpu_id, expected[i].gpu);
        EXPECT_EQ(g.util_source, c.util_source);
        EXPECT_EQ(g.util_pct, c.util_pct);
        EXPECT_EQ(g.active_us, c.active_us);
        EXPECT_EQ(g.bucket_us, c.bucket_us);
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            EXPECT_EQ(g.readings.*f.value, c.readings.*f.value) << f.id << " of card-tick " << i;
        }
        EXPECT_EQ(g.read_errors, c.read_errors);
        ASSERT_EQ(g.proc_count, c.processes.size());
        for (std::size_t k = 0; k < c.processes.size(); ++k) {
            const StoredProc& p = all.procs[g.proc_begin + k];
            EXPECT_EQ(p.type, c.processes[k].type);
            EXPECT_EQ(p.mem_used_mib, c.processes[k].mem_used_mib);
            EXPECT_EQ(p.sm_util_pct, c.processes[k].sm_util_pct);
            EXPECT_EQ(p.idle_held_us, c.processes[k].idle_held_us) << i << " process " << k;
        }
    }
    EXPECT_EQ(Reader(t.db).card_tick_count(), got.size());
}

TEST(Blocks, ViewsAgreeWithTheDecoder) {
    testing::TempDb t;
    testing::RandomHistoryOptions o;
    o.ticks = 300;
    const auto history = testing::random_history(5, k_start, o);
    Writer w(t.db, run_info());
    for (const telemetry::Tick& tick : history) {
        w.write(tick);
    }
    DecodedTicks all;
    std::vector<StoredCardTick> got = scan_all(t.db, all);
    std::string fields;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        fields += fmt::format(", {}", f.id);
    }
    Statement st = t.db.prepare(
        fmt::format("SELECT t0_us, gpu_id, duration_us, util_source, util_pct, active_us, "
                    "idle_us, underutilized_us, productive_us, compute_bound_us, read_errors{} "
                    "FROM card_tick ORDER BY t0_us, gpu_id",
                    fields));
    std::size_t i = 0;
    const auto same = [](const std::optional<std::int64_t>& a, const Statement& s, int col) {
        return a ? (!s.is_null(col) && s.int64(col) == *a) : s.is_null(col);
    };
    while (st.step()) {
        ASSERT_LT(i, got.size());
        const StoredCardTick& g = got[i++];
        ASSERT_EQ(st.int64(0), g.t0);
        ASSERT_EQ(st.int64(1), g.gpu_id);
        EXPECT_EQ(st.int64(2), g.duration_us);
        EXPECT_EQ(st.int64(3), static_cast<std::int64_t>(g.util_source));
        EXPECT_EQ(st.opt_real(4), g.util_pct);
        EXPECT_TRUE(same(g.active_us, st, 5)) << i;
        for (int b = 0; b < 4; ++b) {
            EXPECT_EQ(st.int64(6 + b), g.bucket_us[static_cast<std::size_t>(b)]) << i;
        }
        EXPECT_EQ(st.int64(10), g.read_errors);
        for (std::size_t f = 0; f < telemetry::k_card_field_count; ++f) {
            EXPECT_TRUE(
                same(g.readings.*telemetry::k_card_fields[f].value, st, 11 + static_cast<int>(f)))
                << telemetry::k_card_fields[f].id << " of card-tick " << i;
        }
    }
    EXPECT_EQ(i, got.size());
    std::size_t procs = 0;
    for (const StoredCardTick& g : got) {
        procs += g.proc_count;
    }
    EXPECT_EQ(static_cast<std::size_t>(t.db.scalar("SELECT count(*) FROM proc_tick")), procs);
    EXPECT_EQ(static_cast<std::size_t>(t.db.scalar("SELECT count(*) FROM process_tick")), procs);
    EXPECT_EQ(static_cast<std::size_t>(t.db.scalar("SELECT count(*) FROM card_tick_state")),
              got.size());
}

TEST(Blocks, QuantisesUtilizationPowerAndPerProcessSm) {
    testing::TempDb t;
    telemetry::Tick tick;
    tick.t0 = k_start;
    tick.duration_us = 30 * k_us_per_second;
    telemetry::CardTickRecord c;
    c.device = testing::random_device(0);
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 37.6049;
    c.active_us = 12345;
    c.bucket_us = {100, 200, 300, tick.duration_us - 600};
    c.readings.power_mw = 245499;
    c.readings.mem_used_mib = -5;
    telemetry::ProcessTick p;
    p.pid = 1;
    p.sm_util_pct = 9.996;
    p.mem_used_mib = 500;
    c.processes.push_back(p);
    tick.cards.push_back(c);
    Writer w(t.db, run_info());
    w.write(tick);
    DecodedTicks all;
    const auto got = scan_all(t.db, all);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_DOUBLE_EQ(*got[0].util_pct, 37.6); // 0.01 %
    EXPECT_EQ(got[0].readings.power_mw, 245000);
    EXPECT_EQ(got[0].readings.mem_used_mib, 0);
    EXPECT_EQ(got[0].active_us, 12345);
    EXPECT_EQ(got[0].bucket_us, c.bucket_us);
    EXPECT_EQ(all.procs[0].sm_util_pct, 10.0);
}

TEST(Blocks, ClosedBlocksMoveToTheEndAndOrphansAreClosed) {
    testing::TempDb t;
    testing::RandomHistoryOptions o;
    o.ticks = 200;
    const auto history = testing::random_history(3, k_start, o);
    {
        Writer w(t.db, run_info());
        for (const telemetry::Tick& tick : history) {
            w.write(tick);
        }
        EXPECT_EQ(t.db.scalar("SELECT count(*) FROM tick_block WHERE id < 0"), 1);
    }
    Writer again(t.db, run_info());
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM tick_block WHERE id < 0"), 0);
    EXPECT_EQ(t.db.scalar("PRAGMA auto_vacuum"), 2);
}

/// 8 cards × `procs_per_card` processes, four per card with a per-process SM that flips between 0
/// and 25 % from tick to tick (as at 100 ms ticks with a 1/6 s driver period), and the layout.
std::pair<telemetry::Tick, BlockLayout> flapping_tick(int procs_per_card, std::uint64_t seq) {
    telemetry::Tick tick;
    BlockLayout layout;
    tick.seq = seq;
    tick.t0 = k_start + static_cast<TimeUs>(seq) * 100'000;
    tick.duration_us = 100'000;
    for (int c = 0; c < 8; ++c) {
        telemetry::CardTickRecord card;
        card.device.uuid = "GPU-" + std::to_string(c);
        card.util_source = telemetry::UtilSource::samples;
        card.util_pct = 50;
        card.active_us = tick.duration_us;
        card.bucket_us = {0, tick.duration_us, 0, 0};
        layout.gpus.push_back(c + 1);
        for (int p = 0; p < procs_per_card; ++p) {
            telemetry::ProcessTick process;
            process.pid = static_cast<std::uint32_t>(1000 + c * procs_per_card + p);
            process.mem_used_mib = 1000 + 250 * p;
            process.sm_util_pct = seq % 2 == 0 || p >= 4 ? 0.0 : 25.0;
            card.processes.push_back(process);
            layout.procs.push_back({c, 100 + c * procs_per_card + p, 0});
        }
        tick.cards.push_back(card);
    }
    return {tick, layout};
}

/// Sizes (layout, streams) of the blocks a builder makes from `ticks` flapping ticks.
std::vector<std::pair<std::size_t, std::size_t>> block_sizes(int procs_per_card, int ticks,
                                                             std::vector<std::int64_t>& lengths) {
    BlockBuilder builder;
    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    const auto record = [&] {
        std::size_t streams = 0;
        for (std::size_t i = 0; i < k_stream_count; ++i) {
            streams += builder.stream(i).size();
        }
        sizes.emplace_back(builder.row().cards.size() + builder.row().procs.size(), streams);
        lengths.push_back(builder.row().n_ticks);
    };
    for (int n = 0; n < ticks; ++n) {
        const auto [tick, layout] = flapping_tick(procs_per_card, static_cast<std::uint64_t>(n));
        if (builder.fits(layout, tick.t0)) {
            builder.append(tick);
            continue;
        }
        if (!builder.empty()) {
            record();
        }
        builder.start(1, layout, tick);
    }
    return sizes;
}

// Many processes make a layout of over half the budget: the streams then get the whole budget, so
// a block lasts many ticks instead of one or two. Small layouts keep sharing the budget.
TEST(Blocks, ALargeLayoutLeavesTheStreamsAWholeBudget) {
    std::vector<std::int64_t> lengths;
    const auto large = block_sizes(32, 100, lengths);
    ASSERT_GE(large.size(), 2u);
    EXPECT_GT(large[0].first, BlockBuilder::k_max_bytes / 2);
    for (std::size_t b = 0; b < large.size(); ++b) {
        EXPECT_GE(lengths[b], 6) << b; // 2–3 when the layout counted against the budget
        EXPECT_GE(large[b].second, BlockBuilder::k_max_bytes) << b;
        EXPECT_LT(large[b].second, BlockBuilder::k_max_bytes + 250) << b; // a tick more at most
    }
    lengths.clear();
    const auto small = block_sizes(1, 1000, lengths);
    ASSERT_GE(small.size(), 2u);
    for (std::size_t b = 0; b < small.size(); ++b) {
        EXPECT_LT(small[b].first, BlockBuilder::k_max_bytes / 2) << b;
        EXPECT_GE(small[b].first + small[b].second, BlockBuilder::k_max_bytes) << b;
        EXPECT_LT(small[b].first + small[b].second, BlockBuilder::k_max_bytes + 100) << b;
    }
}

} // namespace
} // namespace gua::store

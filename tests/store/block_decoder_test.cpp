// SPDX-License-Identifier: Apache-2.0
// The reusable block decoder: decoding block after block with one BlockDecoder (its layout cache
// and buffers kept) gives exactly what a fresh decode of each block gives, damaged blocks
// included, and a decoder asked for a few per-card fields fills in those and nothing else.
#include "random_ticks.hpp"
#include "store/block.hpp"
#include "store/raw.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

namespace gua::store {
namespace block_decoder_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

/// Every block row of a database written from random histories of several seeds, in id order.
std::vector<BlockRow> random_blocks(testing::TempDb& t) {
    testing::RandomHistoryOptions o;
    o.ticks = 500;
    for (std::uint64_t seed : {3U, 17U, 29U}) {
        Writer w(t.db, RunInfo{"test", "1", "test", 30 * k_us_per_second, 10.0, k_start});
        const auto history = testing::random_history(seed, k_start, o);
        for (const telemetry::Tick& tick : history) {
            w.write(tick);
        }
        w.finish(history.back().t0);
    }
    Statement st =
        t.db.prepare(fmt::format("SELECT {} FROM tick_block ORDER BY id", block_columns_sql()));
    std::vector<BlockRow> rows;
    while (st.step()) {
        read_block_row(st, rows.emplace_back());
    }
    return rows;
}

/// Whether two decoded card-ticks (and their processes) are equal; `fields` are the readings
/// compared.
bool same(const DecodedTicks& da, const StoredCardTick& a, const DecodedTicks& db,
          const StoredCardTick& b, const CardFieldSet& fields) {
    if (a.t0 != b.t0 || a.duration_us != b.duration_us || a.gpu_id != b.gpu_id ||
        a.run_id != b.run_id || a.util_source != b.util_source || a.util_pct != b.util_pct ||
        a.active_us != b.active_us || a.bucket_us != b.bucket_us ||
        a.unmeasured_us != b.unmeasured_us || a.idle_unlisted_us != b.idle_unlisted_us ||
        a.idle_unknown_us != b.idle_unknown_us || !(a.allocation == b.allocation) ||
        a.read_errors != b.read_errors || a.proc_count != b.proc_count) {
        return false;
    }
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (fields.test(static_cast<std::size_t>(f.field)) &&
            a.readings.*f.value != b.readings.*f.value) {
            return false;
        }
    }
    for (std::uint32_t k = 0; k < a.proc_count; ++k) {
        const StoredProc& p = da.procs[a.proc_begin + k];
        const StoredProc& q = db.procs[b.proc_begin + k];
        if (p.process_id != q.process_id || p.type != q.type || p.mem_used_mib != q.mem_used_mib ||
            p.sm_util_pct != q.sm_util_pct || p.active_us != q.active_us ||
            p.idle_held_us != q.idle_held_us) {
            return false;
        }
    }
    return true;
}

TEST(BlockDecoder, OneDecoderForEveryBlockGivesWhatAFreshDecodeGives) {
    testing::TempDb t;
    std::vector<BlockRow> rows = random_blocks(t);
    std::set<std::string> layouts;
    for (const BlockRow& r : rows) {
        layouts.insert(r.cards + r.procs);
    }
    // More layouts than the decoder keeps, so that some are dropped and parsed again.
    ASSERT_GT(layouts.size(), 40U);
    // Damage a few: a layout that does not parse (then the same text again, from the cache), and
    // a stream cut short under a layout met before.
    ASSERT_GT(rows.size(), 60U);
    rows[20].procs = "[[0,1";
    rows.insert(rows.begin() + 21, rows[20]);
    rows[40].streams[static_cast<std::size_t>(Stream::shape)].resize(1);
    BlockDecoder decoder;
    DecodedTicks reused;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        DecodedTicks fresh;
        const bool fresh_ok = decode_block(rows[i], fresh);
        const std::size_t before = reused.ticks.size();
        ASSERT_EQ(decoder.decode(rows[i], reused), fresh_ok) << "block " << i;
        bad += fresh_ok ? 0 : 1;
        ASSERT_EQ(reused.ticks.size() - before, fresh.ticks.size()) << "block " << i;
        for (std::size_t k = 0; k < fresh.ticks.size(); ++k) {
            ASSERT_TRUE(
                same(reused, reused.ticks[before + k], fresh, fresh.ticks[k], all_card_fields()))
                << "block " << i << " card-tick " << k;
        }
    }
    EXPECT_EQ(bad, 3U);
}

TEST(BlockDecoder, FillsInOnlyTheFieldsAskedFor) {
    testing::TempDb t;
    const std::vector<BlockRow> rows = random_blocks(t);
    const CardFieldSet asked =
        card_field_set({telemetry::CardField::power_mw, telemetry::CardField::sm_active_cpct});
    BlockDecoder all;
    BlockDecoder few(asked);
    DecodedTicks a;
    DecodedTicks f;
    for (const BlockRow& r : rows) {
        ASSERT_EQ(all.decode(r, a), few.decode(r, f));
    }
    ASSERT_EQ(a.ticks.size(), f.ticks.size());
    std::size_t with_power = 0;
    for (std::size_t i = 0; i < a.ticks.size(); ++i) {
        ASSERT_TRUE(same(a, a.ticks[i], f, f.ticks[i], asked)) << i;
        with_power += a.ticks[i].readings.power_mw ? 1 : 0;
        for (const telemetry::CardFieldInfo& field : telemetry::k_card_fields) {
            if (!asked.test(static_cast<std::size_t>(field.field))) {
                ASSERT_FALSE(f.ticks[i].readings.*field.value) << field.id << " of " << i;
            }
        }
    }
    EXPECT_GT(with_power, a.ticks.size() / 4); // the comparison saw real readings
}

} // namespace block_decoder_test
} // namespace gua::store

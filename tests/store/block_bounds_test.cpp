// SPDX-License-Identifier: Apache-2.0
// A damaged tick block: rejected at once by the decoder whatever it claims (no allocation for a
// billion ticks), left out of every reading with its id, run and time named, and noted in the
// report; the rest of the database reads and takes new ticks as before.
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "store/block.hpp"
#include "store/maintenance.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/rollup.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::store {
namespace block_bounds_test { // named after the file: unique in a unity batch

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
    t.cards.push_back(c);
    return t;
}

BlockRow steady_block(std::int64_t ticks) {
    BlockBuilder b;
    b.start(1, BlockLayout{{1}, {}}, idle_tick(k_start));
    for (std::int64_t k = 1; k < ticks; ++k) {
        b.append(idle_tick(k_start + k * k_tick));
    }
    BlockRow row = b.row();
    for (std::size_t s = 0; s < k_stream_count; ++s) {
        row.streams[s] = b.stream(s);
    }
    return row;
}

TEST(BlockBounds, AHugeTickCountIsRejectedAtOnce) {
    BlockRow row = steady_block(3);
    DecodedTicks out;
    ASSERT_TRUE(decode_block(row, out));
    ASSERT_EQ(out.ticks.size(), 3U);
    EXPECT_EQ(out.ticks[2].idle_unlisted_us, k_tick);
    // Every stream of a steady card is constant: only the block's limit bounds its tick count.
    row.n_ticks = 1000000000;
    EXPECT_FALSE(decode_block(row, out));
    row.n_ticks = k_max_block_ticks + 1;
    EXPECT_FALSE(decode_block(row, out));
    EXPECT_EQ(out.ticks.size(), 3U) << "a rejected block adds nothing";
    row.cards = "[" + std::string(2 * k_max_block_cards, '1') + "]";
    row.n_ticks = 3;
    EXPECT_FALSE(decode_block(row, out));
}

TEST(BlockBounds, AFailureHalfWayLeavesTheOutputAsItWas) {
    BlockRow row = steady_block(3);
    row.streams[static_cast<std::size_t>(Stream::shape)] = "A\x02\x02\x0F"; // shape 13: invalid
    DecodedTicks out;
    ASSERT_TRUE(decode_block(steady_block(2), out));
    EXPECT_FALSE(decode_block(row, out));
    EXPECT_EQ(out.ticks.size(), 2U);
}

TEST(BlockBounds, ADamagedBlockIsSkippedNamedAndNoted) {
    testing::TempDb t;
    const std::int64_t hours = 3;
    {
        Writer w(t.db, RunInfo{"h", "d", "nvml", k_tick, 10.0, k_start});
        for (TimeUs t0 = k_start; t0 < k_start + hours * k_us_per_hour; t0 += k_tick) {
            w.write(idle_tick(t0));
        }
        w.finish(k_start + hours * k_us_per_hour);
    }
    t.db.exec("DELETE FROM rollup_hour; DELETE FROM rollup_gpu; DELETE FROM rollup_identity; "
              "DELETE FROM rollup_day; DELETE FROM rollup_day_gpu; DELETE FROM "
              "rollup_day_identity;");
    const TimeUs bad_t0 = k_start + k_us_per_hour;
    const std::int64_t bad_id =
        t.db.scalar("SELECT id FROM tick_block WHERE t0_us = " + std::to_string(bad_t0));
    const std::int64_t bad_ticks =
        t.db.scalar("SELECT n_ticks FROM tick_block WHERE id = " + std::to_string(bad_id));
    ASSERT_EQ(bad_ticks, k_us_per_hour / k_tick);
    t.db.exec("UPDATE tick_block SET n_ticks = 1000000000 WHERE id = " + std::to_string(bad_id));

    Reader reader(t.db);
    std::int64_t seen = 0;
    reader.scan(k_time_min, k_time_max, [&](const audit::CardTick&) { ++seen; });
    EXPECT_EQ(seen, hours * k_us_per_hour / k_tick - bad_ticks);
    ASSERT_EQ(reader.bad_blocks().size(), 1U);
    EXPECT_EQ(reader.bad_blocks()[0], (BadBlock{bad_id, 1, bad_t0}));

    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_NE(problems[0].find("tick block " + std::to_string(bad_id) + " (run 1, from " +
                               format_iso8601(bad_t0) + ")"),
              std::string::npos)
        << problems[0];

    // Rollups of the other hours are built; recording goes on.
    EXPECT_NO_THROW(
        build_missing_rollups(t.db, k_start + (hours + 1) * k_us_per_hour, audit::Thresholds{}));
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM rollup_hour"), hours - 1);
    {
        Writer w(t.db, RunInfo{"h", "d", "nvml", k_tick, 10.0, k_start});
        w.write(idle_tick(k_start + hours * k_us_per_hour));
        w.finish(k_start + hours * k_us_per_hour + k_tick);
    }

    report::BuildOptions b;
    b.from = k_start;
    b.to = k_start + (hours + 1) * k_us_per_hour;
    const report::ReportModel m = report::build_report(t.db, b, TimeZone::load("UTC").value());
    EXPECT_EQ(m.samples,
              static_cast<std::uint64_t>(hours * k_us_per_hour / k_tick - bad_ticks + 1));
    EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(), [&](const std::string& n) {
        return n.find("damaged tick block") != std::string::npos &&
               n.find("block " + std::to_string(bad_id)) != std::string::npos;
    })) << "the report says what it left out";
}

} // namespace block_bounds_test
} // namespace gua::store

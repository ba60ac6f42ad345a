// SPDX-License-Identifier: Apache-2.0
// BlockScanner: every stored card-tick of a window passed on exactly once, in (t0, gpu id) order,
// even where a later block holds earlier ticks (the wall clock stepped back); and, while the clock
// runs forward, never more than one block's card-ticks held at a time. The expected ticks come
// from decoding every row on its own, not from the scanner.
#include "random_ticks.hpp"
#include "store/raw.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace gua::store {
namespace block_scanner_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

struct Recorded {
    std::vector<std::string> ticks; ///< one line per card-tick, in the order the rows decode
    std::vector<TimeUs> t0;         ///< its start, same order
    bool went_back = false;         ///< a row's tick starts before a tick of an earlier row
    std::size_t blocks = 0;
    std::size_t largest_block = 0; ///< most card-ticks in one row
};

std::string line_of(const DecodedTicks& d, const StoredCardTick& t) {
    std::string s = fmt::format("{} {} {} {} {} {} {}", t.t0, t.gpu_id, t.duration_us, t.run_id,
                                t.active_us.value_or(-1), t.unmeasured_us, t.read_errors);
    for (std::uint32_t k = t.proc_begin; k < t.proc_begin + t.proc_count; ++k) {
        s += fmt::format(" p{}:{}", d.procs[k].process_id, d.procs[k].mem_used_mib.value_or(-1));
    }
    return s;
}

Recorded record(Database& db, std::uint64_t seed, bool clock_steps) {
    testing::RandomHistoryOptions o;
    o.ticks = 1500;
    o.clock_steps = clock_steps;
    const auto history = testing::random_history(seed, k_start, o);
    {
        Writer w(db, RunInfo{"test", "1", "test", 30 * k_us_per_second, 10.0, k_start});
        for (const telemetry::Tick& tick : history) {
            w.write(tick);
        }
        w.finish(history.back().t0);
    }
    Recorded r;
    Statement rows = db.prepare(
        fmt::format("SELECT {} FROM tick_block ORDER BY t0_us, id", block_columns_sql()));
    BlockRow row;
    TimeUs latest = k_time_min;
    while (rows.step()) {
        read_block_row(rows, row);
        DecodedTicks d;
        EXPECT_TRUE(decode_block(row, d)) << "block " << row.id;
        TimeUs earliest = k_time_max;
        for (const StoredCardTick& t : d.ticks) {
            r.ticks.push_back(line_of(d, t));
            r.t0.push_back(t.t0);
            earliest = std::min(earliest, t.t0);
        }
        r.went_back = r.went_back || earliest < latest;
        for (const StoredCardTick& t : d.ticks) {
            latest = std::max(latest, t.t0);
        }
        ++r.blocks;
        r.largest_block = std::max(r.largest_block, d.ticks.size());
    }
    return r;
}

struct Scanned {
    std::vector<std::string> ticks;
    std::vector<std::pair<TimeUs, std::int64_t>> keys;
    std::size_t calls = 0;
    std::size_t largest_call = 0;
};

Scanned scan(Database& db, TimeUs from, TimeUs to) {
    Scanned s;
    BlockScanner(db).scan(from, to, [&](const DecodedTicks& d) {
        ++s.calls;
        s.largest_call = std::max(s.largest_call, d.ticks.size());
        for (const StoredCardTick& t : d.ticks) {
            s.ticks.push_back(line_of(d, t));
            s.keys.emplace_back(t.t0, t.gpu_id);
        }
    });
    return s;
}

TEST(BlockScanner, PassesEveryTickOnceInOrderWhenTheClockStepsBack) {
    bool any_went_back = false;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        testing::TempDb t;
        const Recorded r = record(t.db, seed, true);
        any_went_back = any_went_back || r.went_back;
        std::mt19937_64 rng(seed);
        const TimeUs last = *std::max_element(r.t0.begin(), r.t0.end());
        const TimeUs first = *std::min_element(r.t0.begin(), r.t0.end());
        std::vector<std::pair<TimeUs, TimeUs>> windows{{k_time_min, k_time_max}};
        for (int w = 0; w < 4; ++w) {
            std::uniform_int_distribution<TimeUs> at(first - k_us_per_hour, last + k_us_per_hour);
            const TimeUs a = at(rng);
            const TimeUs b = at(rng);
            windows.emplace_back(std::min(a, b), std::max(a, b) + 1);
        }
        for (const auto& [from, to] : windows) {
            std::vector<std::string> expected;
            for (std::size_t i = 0; i < r.ticks.size(); ++i) {
                if (r.t0[i] >= from && r.t0[i] < to) {
                    expected.push_back(r.ticks[i]);
                }
            }
            Scanned s = scan(t.db, from, to);
            EXPECT_TRUE(std::is_sorted(s.keys.begin(), s.keys.end()))
                << "seed " << seed << " window " << from << ".." << to;
            std::sort(expected.begin(), expected.end());
            std::sort(s.ticks.begin(), s.ticks.end());
            EXPECT_EQ(s.ticks, expected) << "seed " << seed << " window " << from << ".." << to;
        }
    }
    EXPECT_TRUE(any_went_back) << "no history stepped back: the merge went untested";
}

TEST(BlockScanner, HoldsAtMostOneBlockWhileTheClockRunsForward) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        testing::TempDb t;
        const Recorded r = record(t.db, seed, false);
        ASSERT_FALSE(r.went_back) << "seed " << seed;
        const Scanned s = scan(t.db, k_time_min, k_time_max);
        EXPECT_EQ(s.ticks.size(), r.ticks.size());
        EXPECT_TRUE(std::is_sorted(s.keys.begin(), s.keys.end()));
        EXPECT_GT(r.blocks, 10u) << "seed " << seed;
        EXPECT_EQ(s.calls, r.blocks) << "one call per block: nothing waits for its hour's end";
        EXPECT_LE(s.largest_call, r.largest_block);
    }
}

} // namespace block_scanner_test
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Property: a window read from hourly rollups plus raw card-ticks equals the same window read
// from raw card-ticks only, on random histories, windows, card filters and time zones.
#include "audit/window.hpp"
#include "core/timezone.hpp"
#include "random_ticks.hpp"
#include "store/reader.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

namespace gua {
namespace rollup_property_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second + 17 * k_us_per_minute;

bool near(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

void expect_same(const audit::WindowAccumulator& a, const audit::WindowAccumulator& b) {
    const auto same_states = [](const audit::StateTimes& x, const audit::StateTimes& y) {
        return x.active == y.active && x.idle_held == y.idle_held && x.truly_idle == y.truly_idle &&
               x.unmeasured == y.unmeasured;
    };
    RC_ASSERT(a.ticks() == b.ticks());
    RC_ASSERT(same_states(a.states(), b.states()));
    RC_ASSERT(a.bucket_us() == b.bucket_us());
    const std::size_t gpus = std::max(a.gpus().size(), b.gpus().size());
    for (std::size_t g = 0; g < gpus; ++g) {
        const audit::GpuTotals x = g < a.gpus().size() ? a.gpus()[g] : audit::GpuTotals{};
        const audit::GpuTotals y = g < b.gpus().size() ? b.gpus()[g] : audit::GpuTotals{};
        RC_ASSERT(x.ticks == y.ticks);
        RC_ASSERT(same_states(x.states, y.states));
        RC_ASSERT(x.bucket_us == y.bucket_us);
        RC_ASSERT(x.provenance == y.provenance); // stored in the evidence BLOB since schema 4
        RC_ASSERT(x.health == y.health);         // health totals: in the same BLOB
        // Pools and profile sums of fractions: equal up to floating-point summation order.
        for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
            RC_ASSERT(near(x.pools[p], y.pools[p]));
        }
        const audit::CardProfile& px = x.profile;
        const audit::CardProfile& py = y.profile;
        RC_ASSERT(px.office_us == py.office_us);
        RC_ASSERT(px.off_hours_us == py.off_hours_us);
        RC_ASSERT(px.steady_us == py.steady_us);
        RC_ASSERT(px.bursty_us == py.bursty_us);
        RC_ASSERT(px.steady_under_us == py.steady_under_us);
        RC_ASSERT(px.steady_compute_bound_us == py.steady_compute_bound_us);
        RC_ASSERT(px.bursty_bucket_us == py.bursty_bucket_us);
        RC_ASSERT(near(px.bursty_util_us, py.bursty_util_us));
        RC_ASSERT(near(px.steady_under_util_us, py.steady_under_util_us));
        RC_ASSERT(near(px.steady_compute_bound_util_us, py.steady_compute_bound_util_us));
        RC_ASSERT(near(px.active_held_mib_us, py.active_held_mib_us));
        RC_ASSERT(near(px.steady_under_held_mib_us, py.steady_under_held_mib_us));
        RC_ASSERT(near(px.idle_held_mib_us, py.idle_held_mib_us));
    }
    const std::size_t ids = std::max(a.identities().size(), b.identities().size());
    for (std::size_t i = 0; i < ids; ++i) {
        const audit::IdentityTotals x =
            i < a.identities().size() ? a.identities()[i] : audit::IdentityTotals{};
        const audit::IdentityTotals y =
            i < b.identities().size() ? b.identities()[i] : audit::IdentityTotals{};
        RC_ASSERT(x.ticks == y.ticks);
        RC_ASSERT(x.active_us == y.active_us);
        RC_ASSERT(x.idle_held_us == y.idle_held_us);
        RC_ASSERT(x.idle_held_mib_ms == y.idle_held_mib_ms);
        RC_ASSERT(x.holder_ticks == y.holder_ticks);
        RC_ASSERT(x.health == y.health); // schema 8: the identity rows' evidence BLOB
        const auto per_gpu = [](const audit::IdentityTotals& t) {
            std::map<std::uint32_t, std::pair<DurationUs, DurationUs>> m;
            for (const audit::IdentityGpuTime& g : t.by_gpu) { // cards it had time on
                if (g.active_us != 0 || g.idle_held_us != 0) {
                    m[g.gpu] = {g.active_us, g.idle_held_us};
                }
            }
            return m;
        };
        RC_ASSERT(per_gpu(x) == per_gpu(y));
    }
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            RC_ASSERT(same_states(a.heatmap()[d][h], b.heatmap()[d][h]));
        }
    }
    RC_ASSERT(a.first() == b.first());
    RC_ASSERT(a.last_end() == b.last_end());
    RC_ASSERT(a.gaps() == b.gaps());
}

audit::Thresholds thresholds_of(int which) {
    audit::Thresholds t;
    if (which == 1) {
        t.held_mib = 200;
    } else if (which == 2) {
        t.graphics_is_holder = true;
        t.active_util_pct = 5;
    }
    return t;
}

/// Records `history` through writers that restart (sometimes without finishing, as after a
/// crash) at random ticks.
void record(store::Database& db, const std::vector<telemetry::Tick>& history,
            const audit::Thresholds& t, std::uint64_t seed, bool roll_up_at_end) {
    std::mt19937_64 rng(seed);
    const auto run = [&] {
        return store::RunInfo{"test",
                              "1",
                              "test",
                              30 * k_us_per_second,
                              t.active_util_pct,
                              k_start,
                              t.held_mib,
                              t.graphics_is_holder};
    };
    auto writer = std::make_unique<store::Writer>(db, run());
    for (const telemetry::Tick& tick : history) {
        if (rng() % 150 == 0) {
            if (rng() % 2 == 0) {
                writer->finish(tick.t0);
            }
            writer = std::make_unique<store::Writer>(db, run());
        }
        writer->write(tick);
    }
    if (roll_up_at_end) {
        store::Transaction tx(db);
        writer->roll_up_before(history.back().t0 + 400 * k_us_per_day);
        tx.commit();
    }
}

RC_GTEST_PROP(RollupProperty, RollupsPlusRawEqualRawOnly, ()) {
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    const int recorded_with = *rc::gen::inRange(0, 3);
    testing::TempDb t;
    const std::vector<telemetry::Tick> history =
        testing::random_history(seed, k_start, {*rc::gen::inRange(50, 400), false, false});
    record(t.db, history, thresholds_of(recorded_with), seed, *rc::gen::arbitrary<bool>());
    store::Reader reader(t.db);
    const auto span = reader.span();
    RC_PRE(span.has_value()); // a history whose cards are all absent records nothing
    const std::vector<std::string> zones{"UTC", "Asia/Kolkata", "Europe/Berlin", "Asia/Kathmandu"};
    bool rollups_used = false;
    bool days_used = false;
    for (int w = 0; w < 6; ++w) {
        const TimeZone tz =
            TimeZone::load(zones[static_cast<std::size_t>(*rc::gen::inRange(0, 4))]).value();
        const audit::Thresholds thresholds =
            thresholds_of(*rc::gen::element(recorded_with, recorded_with, 0));
        const TimeUs length = span->second - span->first + 2 * k_us_per_hour;
        TimeUs from = span->first - k_us_per_hour + *rc::gen::inRange<TimeUs>(0, length);
        TimeUs to = from + *rc::gen::inRange<TimeUs>(1, length);
        if (*rc::gen::arbitrary<bool>()) {
            from = store::hour_of(from) * k_us_per_hour;
            to = (store::hour_of(to) + 1) * k_us_per_hour;
        }
        std::optional<std::int64_t> gpu;
        if (*rc::gen::inRange(0, 4) == 0) {
            gpu = *rc::gen::inRange<std::int64_t>(1, 4);
        }
        const auto cell = [&tz](TimeUs x) { return tz.weekday_hour(x); };
        audit::WindowAccumulator raw_only(thresholds, 0, cell);
        reader.scan(from, to, [&](const audit::CardTick& tick) {
            if (!gpu || tick.gpu == *gpu) {
                raw_only.add(tick);
            }
        });
        audit::WindowAccumulator mixed(thresholds, 0, cell);
        const store::WindowSources sources = reader.accumulate(from, to, gpu, mixed);
        RC_ASSERT(sources.approximate_hours == 0U);
        rollups_used = rollups_used || sources.rollup_hours > 0;
        days_used = days_used || sources.rollup_days > 0;
        expect_same(raw_only, mixed);
    }
    RC_CLASSIFY(rollups_used, "hourly rollups used");
    RC_CLASSIFY(days_used, "daily rollups used");
}

TEST(Rollups, ThirtyDaysOfWholeHoursComeFromRollups) {
    testing::TempDb t;
    testing::RandomHistoryOptions o;
    o.ticks = 3000;
    o.clock_steps = false;
    const std::vector<telemetry::Tick> history = testing::random_history(7, k_start, o);
    record(t.db, history, audit::Thresholds{}, 7, true);
    store::Reader reader(t.db);
    const auto span = reader.span().value();
    audit::WindowAccumulator raw_only(audit::Thresholds{}, 0, [](TimeUs) {
        return std::pair{0, 0};
    });
    reader.scan(span.first, span.second, [&](const audit::CardTick& c) { raw_only.add(c); });
    audit::WindowAccumulator mixed(audit::Thresholds{}, 0, [](TimeUs) { return std::pair{0, 0}; });
    const store::WindowSources s = reader.accumulate(span.first, span.second, std::nullopt, mixed);
    EXPECT_GT(s.rollup_hours, 10U);
    EXPECT_GT(s.rollup_days, 0U);
    EXPECT_EQ(raw_only.ticks(), mixed.ticks());
    EXPECT_EQ(raw_only.states().idle_held, mixed.states().idle_held);
    EXPECT_EQ(raw_only.gaps().size(), mixed.gaps().size());
}

} // namespace rollup_property_test
} // namespace gua

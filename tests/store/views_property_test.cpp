// SPDX-License-Identifier: Apache-2.0
// Property: the administrator views (block_card, card_tick, card_tick_state) add up to the same
// per-card times as the C++ block decoder, on random blocks whose shape stream takes every form
// (constant, periodic, slotted, varying).
#include "store/raw.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {
namespace views_property_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;
constexpr DurationUs k_tick = 30 * k_us_per_second;

/// How a card-tick's times are laid out; each gives the writer one shape code (block.cpp
/// shape_of): not measured, one bucket holding the whole tick, buckets 0–2 listed with active
/// time and bucket 3 following from them, or everything listed.
enum class Kind { unmeasured, one_hot, partial, explicit_times };

/// What stays the same across a card slot's ticks when the slot is steady.
struct SlotPlan {
    bool steady = false;
    Kind kind = Kind::unmeasured;
    DurationUs lost_us = 0; ///< unmeasured part of each tick
    std::size_t hot = 0;    ///< one_hot: the bucket
    bool hot_active = false;
};

Kind any_kind() {
    return static_cast<Kind>(*rc::gen::inRange(0, 4));
}

telemetry::CardTickRecord card_tick(const SlotPlan& plan, int index) {
    telemetry::CardTickRecord r;
    r.device.uuid = fmt::format("GPU-{}-views", index);
    r.device.index = index;
    r.device.name = "NVIDIA Test";
    r.device.memory_total_mib = 81920;
    const Kind kind = plan.steady ? plan.kind : any_kind();
    if (kind == Kind::unmeasured) {
        return r;
    }
    r.unmeasured_us = plan.lost_us;
    r.util_source =
        plan.lost_us > 0 ? telemetry::UtilSource::partial : telemetry::UtilSource::samples;
    r.util_pct = *rc::gen::inRange(0, 101);
    const DurationUs m = k_tick - plan.lost_us;
    if (kind == Kind::one_hot) {
        const std::size_t hot = plan.steady ? plan.hot : *rc::gen::inRange<std::size_t>(0, 4);
        const bool active = plan.steady ? plan.hot_active : *rc::gen::arbitrary<bool>();
        r.bucket_us[hot] = m;
        r.active_us = active ? m : 0;
        return r;
    }
    DurationUs left = m;
    r.bucket_us[0] = *rc::gen::inRange<DurationUs>(1, m);
    left -= r.bucket_us[0];
    r.bucket_us[1] = *rc::gen::inRange<DurationUs>(0, left + 1);
    left -= r.bucket_us[1];
    r.bucket_us[2] = *rc::gen::inRange<DurationUs>(0, left + 1);
    r.bucket_us[3] = left - r.bucket_us[2];
    r.active_us = m - r.bucket_us[0];
    if (kind == Kind::explicit_times) {
        // Not what buckets 0–2 imply (and not 0 or the whole tick): stored explicitly.
        const DurationUs a = *rc::gen::inRange<DurationUs>(1, m);
        r.active_us = a == m - r.bucket_us[0] ? std::nullopt : std::optional<DurationUs>(a);
        if (*rc::gen::inRange(0, 3) == 0) {
            r.bucket_us[3] += 1000; // bucket 3 off the rest as well
        }
    }
    return r;
}

/// Per-card sums: active, the four buckets, unmeasured (the card_tick_state meaning: the whole
/// tick when not measured), truly idle (no holders: the measured time that is not active), and
/// the number of card-ticks.
using Sums = std::array<std::int64_t, 9>;

std::map<std::int64_t, Sums> decoder_sums(Database& db) {
    std::map<std::int64_t, Sums> out;
    BlockScanner scanner(db);
    scanner.scan(k_time_min, k_time_max, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            Sums& s = out[t.gpu_id];
            s[0] += t.active_us.value_or(0);
            for (std::size_t b = 0; b < 4; ++b) {
                s[1 + b] += t.bucket_us[b];
            }
            s[5] += t.active_us ? t.unmeasured_us + t.idle_unknown_us : t.duration_us;
            s[6] += t.active_us
                        ? std::max<DurationUs>(
                              t.duration_us - *t.active_us - t.unmeasured_us - t.idle_unknown_us, 0)
                        : 0;
            s[8] += 1;
        }
    });
    RC_ASSERT(scanner.bad_blocks().empty());
    return out;
}

/// Per-card sums of a view; `st` selects gpu id then the sums in Sums order (seconds as REAL
/// for card_tick_state, rounded to µs here).
std::map<std::int64_t, Sums> view_sums(Statement& st) {
    std::map<std::int64_t, Sums> out;
    st.reset();
    while (st.step()) {
        Sums& s = out[st.int64(0)];
        for (std::size_t c = 0; c < s.size(); ++c) {
            s[c] = std::llround(st.real(static_cast<int>(c) + 1));
        }
    }
    return out;
}

std::string block_card_sql(const std::string& view) {
    return fmt::format("SELECT gpu_id, total(active_us), total(idle_us), total(underutilized_us), "
                       "total(productive_us), total(compute_bound_us), total(CASE WHEN active_us "
                       "IS NULL THEN duration_us ELSE unmeasured_us + idle_unknown_us END), "
                       "total(CASE WHEN active_us IS NULL THEN 0 ELSE max(duration_us - "
                       "active_us - unmeasured_us - idle_unknown_us, 0) END), 0, count(*) "
                       "FROM {} GROUP BY gpu_id",
                       view);
}

constexpr const char* k_state_sql =
    "SELECT g.id, total(s.active_s) * 1e6, 0, 0, 0, 0, total(s.unmeasured_s) * 1e6, "
    "total(s.truly_idle_s) * 1e6, total(s.idle_held_s) * 1e6, count(*) FROM card_tick_state s "
    "JOIN gpu g ON g.uuid = s.uuid GROUP BY g.id";

/// The form of each block's shape stream (its header, codec.cpp).
std::string shape_forms(Database& db) {
    std::string forms;
    Statement st = db.prepare("SELECT unicode(shape) FROM tick_block WHERE shape IS NOT NULL");
    while (st.step()) {
        const std::int64_t h = st.int64(0);
        forms += h >= 'q'   ? "slotted "
                 : h >= 'a' ? "constant "
                 : h >= 'Q' ? "periodic "
                            : "varying ";
    }
    return forms;
}

/// One database for every case, emptied of blocks before each: preparing a query over the
/// views expands their decoding SQL (tens of kB), which costs far more than a case's data, so
/// the three queries are prepared once.
struct Shared {
    testing::TempDb t;
    Statement block_card = t.db.prepare(block_card_sql("block_card"));
    Statement card_tick = t.db.prepare(block_card_sql("card_tick"));
    Statement state = t.db.prepare(k_state_sql);
};

Shared& shared() {
    static Shared s;
    return s;
}

RC_GTEST_PROP(ViewsProperty, PerCardSumsEqualTheDecodersForEveryShapeForm, ()) {
    const int n_cards = *rc::gen::inRange(1, 5);
    const int n_ticks = *rc::gen::inRange(1, 21);
    std::vector<SlotPlan> plans(static_cast<std::size_t>(n_cards));
    for (SlotPlan& p : plans) {
        p.steady = *rc::gen::inRange(0, 3) != 0;
        p.kind = any_kind();
        p.lost_us = *rc::gen::inRange(0, 3) == 0 ? *rc::gen::inRange<DurationUs>(1, k_tick / 2) : 0;
        p.hot = *rc::gen::inRange<std::size_t>(0, 4);
        p.hot_active = *rc::gen::arbitrary<bool>();
    }
    Shared& t = shared();
    t.t.db.exec("DELETE FROM tick_block");
    {
        Writer w(t.t.db, RunInfo{"test", "1", "test", k_tick, 10.0, k_start});
        for (int k = 0; k < n_ticks; ++k) {
            telemetry::Tick tick;
            tick.seq = static_cast<std::uint64_t>(k);
            tick.t0 = k_start + k * k_tick;
            tick.duration_us = k_tick;
            for (int c = 0; c < n_cards; ++c) {
                tick.cards.push_back(card_tick(plans[static_cast<std::size_t>(c)], c));
            }
            w.write(tick);
        }
        w.finish(k_start + n_ticks * k_tick);
    }
    RC_TAG(shape_forms(t.t.db));
    std::map<std::int64_t, Sums> expected = decoder_sums(t.t.db);
    RC_ASSERT(expected.size() == static_cast<std::size_t>(n_cards));
    RC_ASSERT(view_sums(t.block_card) == expected);
    RC_ASSERT(view_sums(t.card_tick) == expected);
    for (auto& [gpu, s] : expected) { // card_tick_state shows states, not buckets
        s[1] = s[2] = s[3] = s[4] = 0;
    }
    RC_ASSERT(view_sums(t.state) == expected);
}

} // namespace views_property_test
} // namespace gua::store

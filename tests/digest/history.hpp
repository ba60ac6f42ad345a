// SPDX-License-Identifier: Apache-2.0
// A generated two-week history for the digest tests, written through the store writer, with its
// state hours integrated tick by tick beside it (the figures the tests expect). Header-only:
// tests/CMakeLists.txt compiles only *_test.cpp outside support/.
#pragma once

#include "core/time.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <map>
#include <random>
#include <string>

namespace gua::digest_test {

/// Integrated hours of one user (or all cards: "*") in one week.
struct Hours {
    double active = 0;
    double idle_held = 0;
};

/// The generated history's truth: per week (0: the earlier, 1: the later) per user.
struct History {
    TimeUs week0 = 0; ///< start of the earlier week; the later one starts 7 days on
    std::map<std::string, Hours> week[2];
};

namespace detail {

constexpr DurationUs k_history_tick = 10 * k_us_per_minute;
constexpr int k_history_ticks_per_week = 7 * 24 * 6;

inline telemetry::CardTickRecord card(int index, const std::string& user, bool active) {
    telemetry::CardTickRecord c;
    c.device.uuid = "GPU-" + std::to_string(7000 + index) + "-aaaa-bbbb-cccc-0123456789ab";
    c.device.index = index;
    c.device.name = "NVIDIA Test";
    c.device.memory_total_mib = 81920;
    c.util_source = telemetry::UtilSource::samples;
    c.util_samples = 1;
    c.util_pct = active ? 80.0 : 0.0;
    c.active_us = active ? k_history_tick : 0;
    c.bucket_us[active ? 2 : 0] = k_history_tick;
    if (user.empty()) {
        c.idle_unlisted_us = k_history_tick;
        return c;
    }
    telemetry::ProcessTick p;
    p.pid = user == "alice" ? 2001U : user == "bob" ? 2002U : 2003U;
    p.start_ticks = 1;
    p.identity.user = user;
    p.identity.command = "python3";
    p.mem_used_mib = 8192;
    p.sm_util_pct = active ? 80.0 : 0.0;
    p.active_us = active ? k_history_tick : 0;
    p.idle_held_us = active ? 0 : k_history_tick;
    c.processes.push_back(p);
    return c;
}

inline void count(History& h, int week, const std::string& user, bool active) {
    const double hours = static_cast<double>(k_history_tick) / static_cast<double>(k_us_per_hour);
    for (const std::string& who : {user, std::string("*")}) {
        if (who.empty()) {
            continue;
        }
        (active ? h.week[week][who].active : h.week[week][who].idle_held) += hours;
    }
}

} // namespace detail

/// Writes 14 days of 10-minute ticks of two cards from `week0` into a new database at `db`:
/// alice on card 0 always (active more often in the earlier week), bob on card 1 most of the
/// time, carol on card 1 for three idle-held ticks of the later week; returns what it wrote.
inline History write_history(const std::string& db_path, TimeUs week0) {
    History h;
    h.week0 = week0;
    std::mt19937_64 rng(7);
    const auto chance = [&](double p) {
        return std::uniform_real_distribution<double>(0, 1)(rng) < p;
    };
    store::Database db(db_path, store::OpenMode::create);
    store::migrate(db);
    store::Writer w(db, store::RunInfo{"digest-host", "560.35.05", "nvml", detail::k_history_tick,
                                       10.0, week0});
    for (int i = 0; i < 2 * detail::k_history_ticks_per_week; ++i) {
        const int week = i / detail::k_history_ticks_per_week;
        telemetry::Tick t;
        t.seq = static_cast<std::uint64_t>(i);
        t.t0 = week0 + static_cast<TimeUs>(i) * detail::k_history_tick;
        t.duration_us = detail::k_history_tick;
        const bool a0 = chance(week == 0 ? 0.7 : 0.5);
        std::string u1 = chance(0.6) ? "bob" : "";
        const bool carol = week == 1 && i % detail::k_history_ticks_per_week >= 300 &&
                           i % detail::k_history_ticks_per_week < 303;
        u1 = carol ? "carol" : u1;
        const bool a1 = !carol && !u1.empty() && chance(0.6);
        t.cards.push_back(detail::card(0, "alice", a0));
        t.cards.push_back(detail::card(1, u1, a1));
        detail::count(h, week, "alice", a0);
        if (!u1.empty()) {
            detail::count(h, week, u1, a1);
        }
        w.write(t);
    }
    w.finish(week0 + 2 * detail::k_history_ticks_per_week * detail::k_history_tick);
    return h;
}

} // namespace gua::digest_test

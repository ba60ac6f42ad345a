// SPDX-License-Identifier: Apache-2.0
// Schema v2 (policy_decision), the decision log, and the recent-state reader with streak rewind.
#include "policy/support.hpp"
#include "store/policy_log.hpp"
#include "store/recent.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace policy_store_test { // named after the file: unique in a unity batch

using policy_test::card;
using policy_test::process;
using policy_test::tick;

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

RunInfo run(TimeUs started, DurationUs interval = 10 * k_s) {
    return RunInfo{"host", "560.35.05", "nvml", interval, 10.0, started};
}

TEST(PolicyStore, MigratesAVersionOneDatabase) {
    policy_test::TempDir dir;
    {
        Database db(dir.file("v1.db"), OpenMode::create);
        migrate_to(db, 1);
        EXPECT_FALSE(has_policy_log(db));
        EXPECT_TRUE(read_decisions(db, 0, k_t0).empty()) << "an old file reads as no decisions";
    }
    Database db(dir.file("v1.db"), OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    EXPECT_TRUE(has_policy_log(db));
}

TEST(PolicyStore, DecisionLogRoundTripsAndUpdates) {
    policy_test::TempDir dir;
    Database db(dir.file("gua.db"), OpenMode::create);
    migrate(db);
    DecisionLog log(db);
    DecisionRow r;
    r.time_us = k_t0;
    r.rule = "reclaim";
    r.action = "terminate";
    r.dry_run = false;
    r.verdict = "act";
    r.outcome = "sigterm-sent";
    r.pid = 4242;
    r.start_ticks = 123456;
    r.user = "alice";
    r.uid = 1500;
    r.command = "python3";
    r.gpu_uuid = "GPU-a";
    r.gpu_index = "0";
    r.memory_mib = 8192;
    r.idle_us = 8 * k_us_per_hour;
    r.updated_us = k_t0;
    const std::int64_t id = log.insert(r);
    log.update(id, "released", "exited after 1s", 64.0, k_t0 + k_s);
    const std::vector<DecisionRow> rows = read_decisions(db, k_t0, k_t0 + 1);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].id, id);
    EXPECT_EQ(rows[0].outcome, "released");
    EXPECT_EQ(rows[0].detail, "exited after 1s");
    EXPECT_DOUBLE_EQ(rows[0].reclaimed_gib_hours, 64.0);
    EXPECT_EQ(rows[0].updated_us, k_t0 + k_s);
    EXPECT_EQ(rows[0].start_ticks, 123456U);
    EXPECT_EQ(rows[0].uid, 1500U);
    EXPECT_EQ(rows[0].memory_mib, 8192);
    EXPECT_FALSE(rows[0].dry_run);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM policy_action WHERE mode = 'real' AND idle_s = "
                        "28800"),
              1);
    EXPECT_TRUE(read_decisions(db, k_t0 + 1, k_t0 + k_s).empty());
}

TEST(PolicyStore, RecentStateAndStreaksAcrossARestart) {
    policy_test::TempDir dir;
    Database db(dir.file("gua.db"), OpenMode::create);
    migrate(db);
    {
        Writer w(db, run(k_t0));
        for (int i = 0; i < 6; ++i) {
            const TimeUs t = k_t0 + i * 10 * k_s;
            const double sm = i == 0 ? 50.0 : 0.0; // busy in the first tick, idle after
            w.write(tick(static_cast<std::uint64_t>(i), t, 10 * k_s,
                         {card(0, 0, 10 * k_s, {process(42, 4200, 8192, sm)}),
                          card(1, 95, 10 * k_s, {process(43, 4300, 1024, 95.0, "bob")})}));
        }
        w.finish(k_t0 + 60 * k_s);
    }
    // Daemon down for 10 minutes, then a new run: the same process, still idle.
    const TimeUs restart = k_t0 + 660 * k_s;
    {
        Writer w(db, run(restart));
        for (int i = 0; i < 3; ++i) {
            const TimeUs t = restart + i * 10 * k_s;
            w.write(tick(static_cast<std::uint64_t>(i), t, 10 * k_s,
                         {card(0, 0, 10 * k_s, {process(42, 4200, 8192, 0.0)}),
                          card(1, 95, 10 * k_s, {process(43, 4300, 1024, 95.0, "bob")})}));
        }
    }
    const RecentState recent = read_recent(db);
    ASSERT_TRUE(recent.run);
    EXPECT_FALSE(recent.run->ended_us) << "the newest run is still recording";
    EXPECT_EQ(recent.last_end, restart + 30 * k_s);
    ASSERT_EQ(recent.cards.size(), 2U);
    const RecentCard& gpu0 = recent.cards[0];
    EXPECT_EQ(gpu0.record.device.index, 0);
    EXPECT_EQ(gpu0.t0, restart + 20 * k_s);
    ASSERT_EQ(gpu0.record.processes.size(), 1U);
    EXPECT_EQ(gpu0.record.processes[0].identity.user, "alice");
    EXPECT_EQ(gpu0.record.processes[0].start_ticks, 4200U);

    const auto streaks = rewind_streaks(db, gpu0, audit::Thresholds{});
    ASSERT_EQ(streaks.size(), 1U);
    const audit::Streak& s = streaks.at(audit::ProcessKey{42, 4200});
    EXPECT_EQ(s.since, k_t0 + 10 * k_s) << "the streak began after the busy first tick";
    EXPECT_EQ(s.idle_us, 80 * k_s) << "5 ticks before the gap and 3 after; the gap not counted";
    EXPECT_EQ(s.last_end, restart + 30 * k_s);
    EXPECT_TRUE(rewind_streaks(db, recent.cards[1], audit::Thresholds{}).empty());

    const auto states = recent_states(db, restart, restart + 30 * k_s, audit::Thresholds{});
    EXPECT_EQ(states.at(gpu0.gpu_id).idle_held, 30 * k_s);
    EXPECT_EQ(states.at(recent.cards[1].gpu_id).active, 30 * k_s);
}

TEST(PolicyStore, RecentStateOfAnEmptyDatabase) {
    policy_test::TempDir dir;
    Database db(dir.file("gua.db"), OpenMode::create);
    migrate(db);
    const RecentState recent = read_recent(db);
    EXPECT_FALSE(recent.run);
    EXPECT_TRUE(recent.cards.empty());
    EXPECT_FALSE(recent.last_end);
}

} // namespace policy_store_test
} // namespace gua::store

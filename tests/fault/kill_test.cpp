// SPDX-License-Identifier: Apache-2.0
// Fault matrix: `kill -9` of the daemon at several points (while it creates the database, in the
// middle of ticks, across hour boundaries with their rollups), restarted each time on the same
// file. Every tick it logged before the kill is in the file, the file is sound, and the report
// accounts for all recorded time.
#include "fault/fault_harness.hpp"

#include <csignal>
#include <random>
#include <thread>

namespace gua::fault {
namespace kill_test { // named after the file: unique in a unity batch

class FaultMatrix : public FaultTest {};

// The simulated clock makes the daemon write ticks back to back (a one-minute tick costs no real
// time, an hour of ticks about a real second), so a kill lands inside the write path — a tick's
// transaction, a block closing, an hour's rollups — rather than in a sleep.
TEST_F(FaultMatrix, KillNineAtRandomPointsLosesNoCompletedTick) {
    write_scenario(two_cards());
    std::mt19937 random(20260105); // fixed: the same kill points on every run
    struct Cycle {
        TimeUs started_us = 0;
        int delay_ms = 0;
        int logged = 0;
    };
    std::vector<Cycle> cycles;
    for (int i = 0; i < 8; ++i) {
        use_simulated_clock(i * 100000.0);
        Cycle c;
        c.started_us = wall_now();
        auto daemon = start_daemon({"--interval", "1m"}, e2e::FakeVariant::modern,
                                   "cycle" + std::to_string(i));
        if (i == 0) {
            c.delay_ms = 5; // while the database is created
        } else if (i < 3) {
            c.delay_ms = std::uniform_int_distribution<int>(0, 150)(random); // starting up
        } else {
            // Recording: killed at a random point after its first tick was written (however
            // slow the machine, the kill lands among written ticks).
            ASSERT_TRUE(daemon->wait_for("Z tick ")) << daemon->err();
            c.delay_ms = std::uniform_int_distribution<int>(0, 400)(random);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(c.delay_ms));
        daemon->signal(SIGKILL);
        ASSERT_EQ(daemon->wait_exit(10s), 128 + SIGKILL) << daemon->err();
        c.logged = logged_ticks(daemon->err());
        cycles.push_back(c);
        ASSERT_EQ(integrity(), "ok") << "after the kill of cycle " << i;
    }
    // A clean run after the last kill: the file still takes ticks.
    use_simulated_clock(900000.0);
    const TimeUs clean_start = wall_now();
    const test::RunResult last = run_daemon({"--interval", "1m", "--ticks", "3"});
    ASSERT_EQ(last.exit_code, 0) << last.err;

    // Each run belongs to the cycle during which it started (wall time of its start).
    test::RawDb raw(db());
    std::vector<std::int64_t> in_file(cycles.size(), 0);
    std::int64_t clean_ticks = -1;
    for (const auto& row :
         raw.rows("SELECT r.started_us AS started, (SELECT coalesce(max(n), 0) FROM (SELECT "
                  "count(*) AS n FROM card_tick c WHERE c.run_id = r.id GROUP BY c.gpu_id)) AS n "
                  "FROM run r")) {
        const TimeUs started = std::stoll(row.at("started"));
        if (started >= clean_start) {
            clean_ticks = std::stoll(row.at("n"));
            continue;
        }
        std::size_t i = cycles.size() - 1;
        while (i > 0 && started < cycles[i].started_us) {
            --i;
        }
        in_file[i] += std::stoll(row.at("n"));
    }
    EXPECT_EQ(clean_ticks, 3);
    for (std::size_t i = 0; i < cycles.size(); ++i) {
        // Logged ⇒ stored; at most the tick being logged at the kill is stored but unlogged.
        EXPECT_GE(in_file[i], cycles[i].logged)
            << "cycle " << i << ", killed after " << cycles[i].delay_ms << " ms";
        EXPECT_LE(in_file[i], cycles[i].logged + 1) << "cycle " << i;
    }
    for (std::size_t i = 3; i < cycles.size(); ++i) {
        EXPECT_GE(cycles[i].logged, 1) << "cycle " << i << " was killed before it recorded";
    }
    expect_sound_and_consistent();
}

} // namespace kill_test
} // namespace gua::fault

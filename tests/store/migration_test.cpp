// SPDX-License-Identifier: Apache-2.0
// Schema upgrades: row-per-tick files of schema 1–2 become tick blocks.
#include "core/fatal.hpp"
#include "legacy_file.hpp"
#include "store/legacy.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/schema.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::store {
namespace {

TEST(Migration, EmptyRowPerTickFileUpgradesToBlocks) {
    testing::TempDir dir;
    {
        Database db(dir.file("old.db"), OpenMode::create);
        migrate_to(db, 2);
        EXPECT_EQ(db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'card_tick' AND "
                            "type = 'table'"),
                  1);
        db.exec("INSERT INTO run (host, driver_version, source, gua_version, interval_us, "
                "active_threshold_pct, started_us) VALUES ('h', 'd', 'nvml', '0.1.0', 30000000, "
                "10, 1)");
    }
    Database db(dir.file("old.db"), OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'tick_block'"), 1);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'legacy_%'"), 0);
    EXPECT_EQ(db.scalar("SELECT held_mib FROM run"), 100)
        << "the run keeps its row, defaults added";
    EXPECT_EQ(db.scalar("SELECT count(*) FROM card_tick"), 0) << "card_tick is now a view";
    EXPECT_EQ(db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'card_tick' AND type = "
                        "'view'"),
              1);
}

TEST(Migration, RowPerTickFileIsConvertedWithoutLosingAnything) {
    testing::TempDir dir;
    const std::string path = dir.file("old.db");
    testing::write_row_per_tick_file(path);
    {
        Database db(path, OpenMode::read_only);
        EXPECT_THROW(check_readable(db), Fatal) << "a report asks for the upgrade first";
    }
    Database db(path, OpenMode::read_write);
    try {
        migrate(db); // demo/import: they do not hold the daemon lock, so they never convert
        FAIL() << "migrate() converted without the lock";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("gua db upgrade"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(has_legacy_ticks(db));
    audit::Thresholds configured;
    configured.held_mib = 500;
    EXPECT_EQ(convert_legacy_ticks(db, configured), 6U);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    EXPECT_FALSE(has_legacy_ticks(db));
    EXPECT_EQ(db.scalar("SELECT count(*) FROM tick_block WHERE id < 0"), 0) << "no open block";
    EXPECT_EQ(db.scalar("SELECT min(held_mib) FROM rollup_hour"), 500)
        << "rollups use the configured thresholds";
    EXPECT_NO_THROW(check_readable(db));
    EXPECT_EQ(db.scalar("SELECT count(*) FROM run"), 1) << "the run keeps its row";
    EXPECT_EQ(db.scalar("SELECT ended_us FROM run"), 1767607290000000);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM process"), 2) << "dimension rows are reused";
    EXPECT_EQ(db.scalar("SELECT count(*) FROM identity"), 2);
    EXPECT_GT(db.scalar("SELECT count(*) FROM rollup_hour"), 0) << "rollups were built";
    Reader reader(db);
    std::vector<audit::CardTick> ticks;
    reader.scan(k_time_min, k_time_max, [&](const audit::CardTick& t) { ticks.push_back(t); });
    ASSERT_EQ(ticks.size(), 6U);
    EXPECT_EQ(ticks[0].t0, 1767607200000000);
    EXPECT_EQ(ticks[0].duration_us, 30000000);
    EXPECT_EQ(ticks[0].gpu, 1U);
    EXPECT_EQ(ticks[0].active_us, 0);
    EXPECT_DOUBLE_EQ(*ticks[1].util_pct, 93.25);
    EXPECT_EQ(ticks[1].bucket_us[2], 30000000);
    ASSERT_EQ(ticks[0].processes.size(), 1U);
    EXPECT_EQ(ticks[0].processes[0].identity, 1U);
    EXPECT_EQ(ticks[0].processes[0].mem_used_mib, 8000);
    EXPECT_EQ(ticks[1].processes[0].mem_used_mib, std::nullopt) << "unknown memory stays unknown";
    EXPECT_DOUBLE_EQ(*ticks[1].processes[0].sm_util_pct, 93.0);
    // Every recorded field, through the administrator view.
    EXPECT_EQ(db.scalar("SELECT sum(read_errors) FROM card_tick WHERE gpu_id = 2"), 3);
    EXPECT_EQ(db.scalar("SELECT sum(power_mw) FROM card_tick WHERE gpu_id = 1"), 183000);
    EXPECT_EQ(db.scalar("SELECT sum(sm_clock_mhz) FROM card_tick WHERE gpu_id = 2"), 3 * 1980);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM process_tick WHERE user = 'alice' AND pid = 4242"),
              3);
}

TEST(Migration, ManyTicksOfSeveralRunsConvertInChunksWithProgress) {
    testing::TempDir dir;
    const std::string path = dir.file("old.db");
    {
        Database db(path, OpenMode::create);
        migrate_to(db, 2);
        db.exec("INSERT INTO run (id, host, driver_version, source, gua_version, interval_us, "
                "active_threshold_pct, started_us) VALUES (1, 'h', 'd', 'nvml', '0.1.0', "
                "30000000, 10, 0), (2, 'h', 'd', 'nvml', '0.1.0', 30000000, 10, 0);"
                "INSERT INTO gpu (id, uuid, idx, name) VALUES (1, 'GPU-a', 0, 'A100');");
        Transaction tx(db);
        Statement ins = db.prepare(
            "INSERT INTO card_tick (t0_us, gpu_id, run_id, duration_us, util_source, active_us, "
            "idle_us, compute_bound_us) VALUES (?, 1, ?, 30000000, 2, ?, ?, ?)");
        for (int k = 0; k < 3000; ++k) { // run 1: 2,500 ticks, run 2: 500 (an older restart)
            const bool first = k < 2500;
            const std::int64_t t0 = 1767607200000000LL + (first ? k + 500 : k - 2500) * 30000000LL;
            const std::int64_t active = (k % 3 == 0) ? 30000000 : 0;
            ins.bind(1, t0);
            ins.bind(2, std::int64_t{first ? 1 : 2});
            ins.bind(3, active);
            ins.bind(4, std::int64_t{30000000 - active});
            ins.bind(5, active);
            ins.run();
        }
        tx.commit();
    }
    Database db(path, OpenMode::read_write);
    migrate_to(db, k_schema_version);
    std::vector<std::uint64_t> seen;
    EXPECT_EQ(convert_legacy_ticks(db, audit::Thresholds{},
                                   [&](std::uint64_t done, std::uint64_t total) {
                                       EXPECT_EQ(total, 3000U);
                                       seen.push_back(done);
                                   }),
              3000U);
    ASSERT_GE(seen.size(), 3U) << "progress after every transaction";
    EXPECT_EQ(seen.back(), 3000U);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(db.scalar("SELECT count(*) FROM tick_block WHERE id < 0"), 0);
    EXPECT_EQ(db.scalar("SELECT count(DISTINCT run_id) FROM tick_block"), 2);
    std::int64_t active = 0;
    std::size_t ticks = 0;
    Reader(db).scan(k_time_min, k_time_max, [&](const audit::CardTick& t) {
        ++ticks;
        active += t.active_us.value_or(0);
    });
    EXPECT_EQ(ticks, 3000U);
    EXPECT_EQ(active, 1000LL * 30000000LL);
}

} // namespace
} // namespace gua::store

// Frozen migrations: a new file made by every migration at once equals one upgraded version by
// version, schema 3 keeps its own stream columns, a schema 3 file with data upgrades with the
// "old recording" meaning (no unmeasured time, no per-process active time), and a schema 4 file
// reads the same through the new views and decoder.
#include "core/fatal.hpp"
#include "store/block.hpp"
#include "store/frozen_sql.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"
#include "store/views.hpp"
#include "store/writer.hpp"
#include "support/raw_db.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

namespace gua::store {
namespace schema_freeze_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

/// Everything that defines the schema, in a stable order.
std::vector<std::string> schema_of(Database& db) {
    std::vector<std::string> out;
    Statement st =
        db.prepare("SELECT type || ' ' || name || ' ' || tbl_name || ' ' || COALESCE(sql, '') FROM "
                   "sqlite_schema ORDER BY type, name");
    while (st.step()) {
        out.push_back(st.text(0));
    }
    out.push_back(fmt::format("user_version {} application_id {}", db.scalar("PRAGMA user_version"),
                              db.scalar("PRAGMA application_id")));
    return out;
}

std::vector<std::string> columns_of(Database& db, const std::string& table) {
    std::vector<std::string> out;
    Statement st = db.prepare(fmt::format("SELECT name FROM pragma_table_info('{}')", table));
    while (st.step()) {
        out.push_back(st.text(0));
    }
    return out;
}

TEST(FrozenMigrations, FreshFileEqualsOneUpgradedStepByStep) {
    testing::TempDir dir;
    Database fresh(dir.file("fresh.db"), OpenMode::create);
    migrate(fresh);
    for (std::int64_t v = 1; v <= k_schema_version; ++v) {
        Database step(dir.file("step.db"), OpenMode::create); // reopened for every version
        migrate_to(step, v);
        EXPECT_EQ(step.scalar("PRAGMA user_version"), v);
    }
    Database step(dir.file("step.db"), OpenMode::read_write);
    EXPECT_EQ(schema_of(step), schema_of(fresh));
    EXPECT_EQ(fresh.scalar("PRAGMA user_version"), 5);
}

TEST(FrozenMigrations, SchemaThreeKeepsItsOwnStreamColumns) {
    testing::TempDb t; // the newest schema, for comparison
    testing::TempDir dir;
    Database v3(dir.file("v3.db"), OpenMode::create);
    migrate_to(v3, 3);
    std::vector<std::string> expected{"id",      "t0_us",   "end_us", "run_id",
                                      "n_ticks", "tick_us", "cards",  "procs"};
    for (std::size_t s = 0; s < 15; ++s) { // the streams schema 3 had, in its column order
        expected.emplace_back(k_stream_columns[s]);
    }
    EXPECT_EQ(columns_of(v3, "tick_block"), expected);
    for (std::size_t s = 15; s < k_stream_count; ++s) {
        expected.emplace_back(k_stream_columns[s]);
    }
    EXPECT_EQ(columns_of(t.db, "tick_block"), expected);
    EXPECT_EQ(v3.scalar("SELECT count(*) FROM pragma_table_info('card_tick') WHERE name = "
                        "'unmeasured_us'"),
              0);
}

TEST(FrozenMigrations, NewestMigrationHoldsTheGeneratedViews) {
    EXPECT_TRUE(k_schema_v5_sql.ends_with(views_sql()))
        << "views.cpp or the field table changed: freeze this text in a new migration (after "
           "its ALTER TABLE and DROP VIEW statements):\n"
        << views_sql();
}

/// A tick with every provenance field left at its "old recording" value except those given.
telemetry::Tick tick_at(TimeUs t0) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = 30 * k_us_per_second;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "A100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 50;
    c.active_us = 12 * k_us_per_second;
    c.bucket_us = {18 * k_us_per_second, 12 * k_us_per_second, 0, 0};
    telemetry::ProcessTick p;
    p.pid = 42;
    p.start_ticks = 7;
    p.identity.user = "alice";
    p.mem_used_mib = 4000;
    p.sm_util_pct = 40;
    c.processes.push_back(p);
    t.cards.push_back(c);
    return t;
}

TEST(FrozenMigrations, SchemaThreeFileWithDataUpgrades) {
    testing::TempDir dir;
    const std::string path = dir.file("v3.db");
    {
        // A schema 3 file as gua wrote it: the frozen schema 3 SQL, and blocks holding the 15
        // streams schema 3 had (their encoding is unchanged for these values).
        Database db(path, OpenMode::create);
        migrate_to(db, 3);
        db.exec("INSERT INTO run (host, driver_version, source, gua_version, interval_us, "
                "active_threshold_pct, started_us) VALUES ('h', 'd', 'nvml', '0.1', 30000000, 10, "
                "1)");
        db.exec("INSERT INTO gpu (uuid, idx, name) VALUES ('GPU-a', 0, 'A100')");
        db.exec("INSERT INTO identity (user) VALUES ('alice')");
        db.exec("INSERT INTO process (pid, start_ticks, identity_id) VALUES (42, 7, 1)");
        BlockBuilder b;
        const BlockLayout layout{{1}, {BlockLayout::Proc{0, 1, 0}}};
        b.start(1, layout, tick_at(k_start));
        b.append(tick_at(k_start + 30 * k_us_per_second));
        std::string columns = "id, t0_us, end_us, run_id, n_ticks, tick_us, cards, procs";
        std::string values = "1, ?1, ?2, 1, 2, 30000000, '[1]', '[[0,1,0]]'";
        for (std::size_t s = 0; s < 15; ++s) {
            columns += fmt::format(", {}", k_stream_columns[s]);
            values += fmt::format(", ?{}", 3 + s);
        }
        Statement st =
            db.prepare(fmt::format("INSERT INTO tick_block ({}) VALUES ({})", columns, values));
        st.bind(1, std::int64_t{k_start});
        st.bind(2, std::int64_t{k_start + 60 * k_us_per_second});
        for (std::size_t s = 0; s < 15; ++s) {
            if (b.stream(s).empty()) {
                st.bind_null(static_cast<int>(3 + s));
            } else {
                st.bind(static_cast<int>(3 + s), std::string_view(b.stream(s)));
            }
        }
        st.run();
        EXPECT_THROW(check_readable(db), Fatal) << "a schema 3 file needs the upgrade";
    }
    Database db(path, OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    check_readable(db);
    std::vector<audit::CardTick> ticks;
    Reader(db).scan(k_time_min, k_time_max, [&](const audit::CardTick& t) { ticks.push_back(t); });
    ASSERT_EQ(ticks.size(), 2U);
    for (const audit::CardTick& t : ticks) {
        EXPECT_EQ(t.active_us, 12 * k_us_per_second);
        EXPECT_EQ(t.unmeasured_us, 0);
        EXPECT_EQ(t.idle_unlisted_us, 0);
        EXPECT_EQ(t.idle_unknown_us, 0);
        ASSERT_EQ(t.processes.size(), 1U);
        EXPECT_EQ(t.processes[0].active_us, std::nullopt) << "absent, not 0";
    }
    EXPECT_EQ(db.scalar("SELECT count(*) FROM card_tick WHERE unmeasured_us = 0 AND "
                        "idle_unlisted_us = 0 AND idle_unknown_us = 0 AND active_us = 12000000"),
              2);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM proc_tick WHERE active_us IS NULL"), 2);
    // The upgraded file takes new ticks with provenance next to the old ones.
    {
        Writer w(db, RunInfo{"h", "d", "nvml", 30 * k_us_per_second, 10.0, k_start});
        telemetry::Tick t = tick_at(k_start + 2 * k_us_per_hour);
        t.cards[0].unmeasured_us = 3 * k_us_per_second;
        t.cards[0].bucket_us = {15 * k_us_per_second, 12 * k_us_per_second, 0, 0};
        t.cards[0].processes[0].active_us = 9 * k_us_per_second;
        w.write(t);
        w.finish(t.t0 + t.duration_us);
    }
    EXPECT_EQ(db.scalar("SELECT unmeasured_us FROM card_tick ORDER BY t0_us DESC LIMIT 1"),
              3 * k_us_per_second);
    EXPECT_EQ(db.scalar("SELECT active_us FROM proc_tick ORDER BY t0_us DESC LIMIT 1"),
              9 * k_us_per_second);
}

/// Every row of `sql` as an administrator's sqlite3 sees it.
std::vector<std::map<std::string, std::string>> rows_of(const std::string& path,
                                                        const std::string& sql) {
    return test::RawDb(path).rows(sql);
}

TEST(FrozenMigrations, SchemaFourFileReadsTheSameAfterTheUpgrade) {
    testing::TempDir dir;
    const std::string path = dir.file("v4.db");
    const std::string card_sql = "SELECT * FROM card_tick ORDER BY t0_us, gpu_id";
    const std::string proc_sql = "SELECT * FROM proc_tick ORDER BY t0_us, gpu_id, process_id";
    std::vector<std::map<std::string, std::string>> cards_before;
    std::vector<std::map<std::string, std::string>> procs_before;
    std::vector<audit::CardTick> before;
    {
        // One card and one process: the writer then only writes the stream forms schema 4 had.
        Database db(path, OpenMode::create);
        migrate_to(db, 4);
        Writer w(db, RunInfo{"h", "d", "nvml", 30 * k_us_per_second, 10.0, k_start});
        for (int k = 0; k < 40; ++k) {
            telemetry::Tick t = tick_at(k_start + k * 30 * k_us_per_second);
            t.cards[0].readings.power_mw = 100000 + 7000 * (k % 5);
            t.cards[0].readings.temperature_c = 40 + k / 10;
            t.cards[0].readings.clock_events = k % 3 == 0 ? 0x4 : 0;
            t.cards[0].processes[0].active_us = 9 * k_us_per_second;
            t.cards[0].unmeasured_us = k % 7 == 0 ? 3 * k_us_per_second : 0;
            w.write(t);
        }
        w.finish(k_start + 40 * 30 * k_us_per_second);
        cards_before = rows_of(path, card_sql);
        procs_before = rows_of(path, proc_sql);
        Reader(db).scan(k_time_min, k_time_max,
                        [&](const audit::CardTick& t) { before.push_back(t); });
    }
    Database db(path, OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    EXPECT_EQ(rows_of(path, card_sql), cards_before);
    EXPECT_EQ(rows_of(path, proc_sql), procs_before);
    EXPECT_EQ(cards_before.size(), 40U);
    std::vector<audit::CardTick> after;
    Reader(db).scan(k_time_min, k_time_max, [&](const audit::CardTick& t) { after.push_back(t); });
    ASSERT_EQ(after.size(), 40U);
    ASSERT_EQ(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(after[i].readings, before[i].readings) << i;
        EXPECT_EQ(after[i].active_us, before[i].active_us) << i;
        EXPECT_EQ(after[i].unmeasured_us, before[i].unmeasured_us) << i;
    }
    EXPECT_EQ(after[6].readings.power_mw, 107000); // as written
    EXPECT_EQ(after[25].readings.temperature_c, 42);
    EXPECT_EQ(after[27].readings.clock_events, 0x4);
    EXPECT_EQ(after[28].readings.clock_events, 0);
}

} // namespace schema_freeze_test
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
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

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
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
    EXPECT_EQ(fresh.scalar("PRAGMA user_version"), k_schema_version);
}

TEST(FrozenMigrations, SchemaVersionIsTheNewestMigrationFile) {
    // The files in the source tree, counted here independently of CMake's glob.
    std::int64_t newest = 0;
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(
             std::filesystem::path(GUA_SOURCE_DIR) / "src/store/migrations")) {
        const std::string name = entry.path().filename().string();
        if (name.size() > 5 && name[0] == 'v' && name.ends_with(".sql")) {
            newest = std::max<std::int64_t>(newest, std::stoll(name.substr(1, name.size() - 5)));
            ++files;
        }
    }
    EXPECT_EQ(k_schema_version, newest);
    ASSERT_EQ(k_frozen_migrations.size(), files);
    for (std::size_t i = 0; i < files; ++i) { // v3.sql, v4.sql, ... in order, each built in
        const std::int64_t version = k_first_migration_file + static_cast<std::int64_t>(i);
        EXPECT_EQ(k_frozen_migrations[i].version, version);
        std::ifstream in(std::filesystem::path(GUA_SOURCE_DIR) /
                         fmt::format("src/store/migrations/v{}.sql", version));
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        EXPECT_EQ(frozen_sql(version), text) << "v" << version << ".sql";
    }
}

TEST(FrozenMigrations, NewFileSchemaIsWhatTheMigrationsMake) {
    testing::TempDir dir;
    Database stepped(dir.file("step.db"), OpenMode::create);
    for (std::int64_t v = 1; v <= k_schema_version; ++v) {
        migrate_to(stepped, v);
    }
    // A new file's tables start empty: the one-step schema carries no rows.
    Statement tables = stepped.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    while (tables.step()) {
        EXPECT_EQ(stepped.scalar(fmt::format("SELECT count(*) FROM \"{}\"", tables.text(0))), 0)
            << tables.text(0);
    }
    // The build made current_schema_sql() the same way; a stale build would differ here.
    EXPECT_EQ(current_schema_sql(), schema_sql_of(stepped));
    EXPECT_NE(current_schema_sql().find("CREATE TABLE tick_block"), std::string_view::npos);
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
    EXPECT_TRUE(frozen_sql(k_newest_migration).ends_with(views_sql()))
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

/// Stores what `b` holds as block 1 of a file of an older schema, as the gua of that schema did:
/// only the stream columns its tick_block has (the others did not exist yet).
void insert_old_block(Database& db, const BlockBuilder& b) {
    const std::vector<std::string> have = columns_of(db, "tick_block");
    std::string columns = "id, t0_us, end_us, run_id, n_ticks, tick_us, cards, procs";
    std::string values = "1, ?1, ?2, ?3, ?4, ?5, ?6, ?7";
    std::vector<std::size_t> streams;
    for (std::size_t s = 0; s < k_stream_count; ++s) {
        if (std::find(have.begin(), have.end(), k_stream_columns[s]) != have.end()) {
            streams.push_back(s);
            columns += fmt::format(", {}", k_stream_columns[s]);
            values += fmt::format(", ?{}", 7 + streams.size());
        }
    }
    Statement st =
        db.prepare(fmt::format("INSERT INTO tick_block ({}) VALUES ({})", columns, values));
    const BlockRow& r = b.row();
    st.bind(1, std::int64_t{r.t0_us});
    st.bind(2, std::int64_t{r.end_us});
    st.bind(3, std::int64_t{r.run_id});
    st.bind(4, std::int64_t{r.n_ticks});
    st.bind(5, std::int64_t{r.tick_us});
    st.bind(6, std::string_view(r.cards));
    st.bind(7, std::string_view(r.procs));
    for (std::size_t i = 0; i < streams.size(); ++i) {
        const std::string& text = b.stream(streams[i]);
        const int index = static_cast<int>(8 + i);
        if (text.empty()) {
            st.bind_null(index);
        } else {
            st.bind(index, std::string_view(text));
        }
    }
    st.run();
}

/// A file of schema `version` holding 40 ticks of `cards` cards (one process each) as that
/// schema's gua wrote them, with every per-card field set in the ticks; returns the ticks.
std::vector<telemetry::Tick> old_file(const std::string& path, std::int64_t version, int cards) {
    Database db(path, OpenMode::create);
    migrate_to(db, version);
    db.exec("INSERT INTO run (host, driver_version, source, gua_version, interval_us, "
            "active_threshold_pct, started_us) VALUES ('h', 'd', 'nvml', '0.1', 30000000, 10, 1)");
    db.exec("INSERT INTO identity (user) VALUES ('alice')");
    BlockLayout layout;
    for (int c = 0; c < cards; ++c) {
        db.exec(
            fmt::format("INSERT INTO gpu (uuid, idx, name) VALUES ('GPU-{0}', {0}, 'A100')", c));
        db.exec(fmt::format("INSERT INTO process (pid, start_ticks, identity_id) VALUES ({}, 7, 1)",
                            42 + c));
        layout.gpus.push_back(c + 1);
        layout.procs.push_back(BlockLayout::Proc{c, c + 1, 0});
    }
    std::vector<telemetry::Tick> ticks;
    BlockBuilder b;
    for (int k = 0; k < 40; ++k) {
        telemetry::Tick t = tick_at(k_start + k * 30 * k_us_per_second);
        t.cards.resize(static_cast<std::size_t>(cards), t.cards[0]);
        for (int c = 0; c < cards; ++c) {
            telemetry::CardTickRecord& r = t.cards[static_cast<std::size_t>(c)];
            r.device.uuid = fmt::format("GPU-{}", c);
            r.processes[0].pid = static_cast<std::uint32_t>(42 + c);
            r.processes[0].active_us = 9 * k_us_per_second;
            r.unmeasured_us = k % 7 == 0 ? 3 * k_us_per_second : 0;
            for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
                r.readings.*f.value = f.quantum * (c == 0 ? 40 + k / 10 : 7 * (k % 5));
            }
            r.readings.clock_events = k % 3 == 0 ? 0x4 : 0;
        }
        if (k == 0) {
            b.start(1, layout, t);
        } else {
            b.append(t);
        }
        ticks.push_back(t);
    }
    insert_old_block(db, b);
    return ticks;
}

/// Files of schema 4, 5 and 6 read after the upgrade as they did: the fields they had as written
/// (through the new decoder and the new views, which agree with the old views), the fields added
/// later NULL.
TEST(FrozenMigrations, OlderFilesReadTheSameAfterTheUpgrade) {
    for (const auto& [version, cards] : {std::pair<std::int64_t, int>{4, 1}, {5, 3}, {6, 2}}) {
        SCOPED_TRACE(fmt::format("schema {}, {} cards", version, cards));
        testing::TempDir dir;
        const std::string path = dir.file("old.db");
        const std::string card_sql = "SELECT * FROM card_tick ORDER BY t0_us, gpu_id";
        const std::vector<telemetry::Tick> ticks = old_file(path, version, cards);
        const auto cards_before = rows_of(path, card_sql);
        ASSERT_EQ(cards_before.size(), 40U * static_cast<std::size_t>(cards));
        {
            Database db(path, OpenMode::read_write);
            migrate(db);
            EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
            check_readable(db);
        }
        const auto cards_after = rows_of(path, card_sql);
        ASSERT_EQ(cards_after.size(), cards_before.size());
        for (std::size_t i = 0; i < cards_after.size(); ++i) {
            for (const auto& [column, value] : cards_before[i]) {
                EXPECT_EQ(cards_after[i].at(column), value) << column << " of row " << i;
            }
        }
        Database db(path, OpenMode::read_write);
        std::vector<audit::CardTick> after;
        Reader(db).scan(k_time_min, k_time_max,
                        [&](const audit::CardTick& t) { after.push_back(t); });
        ASSERT_EQ(after.size(), cards_after.size());
        for (std::size_t i = 0; i < after.size(); ++i) {
            const telemetry::CardTickRecord& written =
                ticks[i / static_cast<std::size_t>(cards)]
                    .cards[i % static_cast<std::size_t>(cards)];
            EXPECT_EQ(after[i].active_us, written.active_us) << i;
            EXPECT_EQ(after[i].unmeasured_us, written.unmeasured_us) << i;
            for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
                const std::string shown = cards_after[i].at(std::string(f.id));
                if (f.since <= version) {
                    EXPECT_EQ(after[i].readings.*f.value, written.readings.*f.value) << f.id;
                    EXPECT_EQ(shown, std::to_string(*(written.readings.*f.value))) << f.id;
                } else {
                    EXPECT_EQ(after[i].readings.*f.value, std::nullopt) << f.id << ": n/a";
                    EXPECT_EQ(shown, "NULL") << f.id;
                }
            }
        }
    }
}

} // namespace schema_freeze_test
} // namespace gua::store

// Schema upgrades: a file of the row-per-tick layout (schema 1–2) and the evidence BLOB format.
#include "core/fatal.hpp"
#include "store/evidence.hpp"
#include "store/schema.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

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
}

TEST(Migration, RowPerTickFileWithDataIsRefusedAndLeftUnchanged) {
    testing::TempDir dir;
    {
        Database db(dir.file("old.db"), OpenMode::create);
        migrate_to(db, 2);
        db.exec("INSERT INTO run (id, host, driver_version, source, gua_version, interval_us, "
                "active_threshold_pct, started_us) VALUES (1, 'h', 'd', 'nvml', '0.1.0', "
                "30000000, 10, 1);"
                "INSERT INTO gpu (id, uuid, idx, name) VALUES (1, 'GPU-x', 0, 'A100');"
                "INSERT INTO card_tick (t0_us, gpu_id, run_id, duration_us, util_source) "
                "VALUES (1, 1, 1, 30000000, 2)");
    }
    Database db(dir.file("old.db"), OpenMode::read_write);
    try {
        migrate(db);
        FAIL() << "a file with row-per-tick data was migrated";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("1 card-ticks"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("left unchanged"), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.scalar("PRAGMA user_version"), 2);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM card_tick"), 1);
}

TEST(Evidence, RoundTripsEveryFieldAndSkipsZeros) {
    audit::PoolTimes pools{};
    audit::CardProfile profile;
    EXPECT_TRUE(encode_evidence(pools, profile).empty()) << "an idle card costs nothing";
    for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
        pools[p] = 0.5 + static_cast<double>(p);
    }
    profile.office_us = 1;
    profile.off_hours_us = 2;
    profile.steady_us = 3;
    profile.bursty_us = 4;
    profile.steady_under_us = 5;
    profile.steady_compute_bound_us = 6;
    profile.bursty_bucket_us = {7, 8, 9, 10};
    profile.bursty_util_us = 11.25;
    profile.steady_under_util_us = 12.5;
    profile.steady_compute_bound_util_us = 13.75;
    profile.active_held_mib_us = 1e18;
    profile.steady_under_held_mib_us = 15.0;
    profile.idle_held_mib_us = -16.0;
    const std::string blob = encode_evidence(pools, profile);
    EXPECT_EQ(blob.size(), 24U * 9U);
    audit::PoolTimes pools_back{};
    audit::CardProfile back;
    decode_evidence(blob, pools_back, back);
    EXPECT_EQ(pools_back, pools);
    EXPECT_EQ(back.office_us, 1);
    EXPECT_EQ(back.steady_compute_bound_us, 6);
    EXPECT_EQ(back.bursty_bucket_us, profile.bursty_bucket_us);
    EXPECT_EQ(back.bursty_util_us, 11.25);
    EXPECT_EQ(back.active_held_mib_us, 1e18);
    EXPECT_EQ(back.idle_held_mib_us, -16.0);
    decode_evidence(blob.substr(0, 13), pools_back, back);
    EXPECT_EQ(pools_back[0], 0.5) << "a truncated tail is ignored";
    EXPECT_EQ(pools_back[1], 0.0);
}

} // namespace
} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// `gua db check` (check_database): a tick block whose header disagrees with its ticks, and an
// hourly rollup that disagrees with the raw ticks it was built from, are named; an hour whose raw
// ticks retention has partly deleted is not.
#include "store/evidence.hpp"
#include "store/maintenance.hpp"
#include "store/rollup.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace db_check_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;
constexpr DurationUs k_tick = 60 * k_us_per_second;
constexpr std::int64_t k_hours = 3;

telemetry::Tick busy_tick(TimeUs t0) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = k_tick;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "A100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 80;
    c.active_us = k_tick;
    c.bucket_us = {0, 0, k_tick, 0};
    c.readings.power_mw = 300000;
    t.cards.push_back(c);
    return t;
}

/// Three recorded hours with their rollups.
void record(Database& db) {
    Writer w(db, RunInfo{"h", "d", "nvml", k_tick, 10.0, k_start});
    for (TimeUs t0 = k_start; t0 < k_start + k_hours * k_us_per_hour; t0 += k_tick) {
        w.write(busy_tick(t0));
    }
    w.finish(k_start + k_hours * k_us_per_hour);
    build_missing_rollups(db, k_start + (k_hours + 1) * k_us_per_hour, audit::Thresholds{});
}

std::string hour_sql(int k) {
    return std::to_string(k_start / k_us_per_hour + k);
}

TEST(DbCheck, ASoundDatabasePasses) {
    testing::TempDb t;
    record(t.db);
    ASSERT_EQ(t.db.scalar("SELECT count(*) FROM rollup_gpu"), k_hours);
    EXPECT_EQ(check_database(t.db), std::vector<std::string>{});
}

TEST(DbCheck, ABlockThatSaysItHoldsNoTicksIsNamed) {
    testing::TempDb t;
    record(t.db);
    const std::int64_t id = t.db.scalar("SELECT min(id) FROM tick_block");
    t.db.exec("UPDATE tick_block SET n_ticks = 0 WHERE id = " + std::to_string(id));
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(problems[0].find("tick block " + std::to_string(id)), std::string::npos)
        << problems[0];
    EXPECT_NE(problems[0].find("says it holds 0 ticks"), std::string::npos) << problems[0];
}

TEST(DbCheck, ABlockWithFewerTicksThanItsEndIsNamed) {
    testing::TempDb t;
    record(t.db);
    const std::int64_t id = t.db.scalar("SELECT min(id) FROM tick_block");
    t.db.exec("UPDATE tick_block SET n_ticks = n_ticks - 1 WHERE id = " + std::to_string(id));
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(problems[0].find("tick block " + std::to_string(id)), std::string::npos)
        << problems[0];
}

TEST(DbCheck, CorruptedRollupEvidenceIsNamed) {
    testing::TempDb t;
    record(t.db);
    const std::string hour = hour_sql(1);
    std::string blob;
    {
        Statement st = t.db.prepare("SELECT evidence FROM rollup_gpu WHERE hour = " + hour);
        ASSERT_TRUE(st.step());
        blob = std::string(st.blob(0));
    }
    audit::GpuTotals totals;
    decode_evidence(blob, totals);
    totals.overlap_us += 7 * k_us_per_second; // what §8 reads as double-recorded time
    Statement up = t.db.prepare("UPDATE rollup_gpu SET evidence = ? WHERE hour = " + hour);
    up.bind_blob(1, encode_evidence(totals));
    up.run();
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_NE(problems[0].find("disagrees with its raw ticks (evidence fields"), std::string::npos)
        << problems[0];
}

TEST(DbCheck, RollupStateTimesThatDisagreeAreNamed) {
    testing::TempDb t;
    record(t.db);
    t.db.exec("UPDATE rollup_gpu SET active_us = active_us - 1000000 WHERE hour = " + hour_sql(2));
    const std::vector<std::string> problems = check_database(t.db);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_NE(problems[0].find("(state times)"), std::string::npos) << problems[0];
}

TEST(DbCheck, AnHourWhoseRawTicksArePartlyDeletedIsNotCompared) {
    testing::TempDb t;
    record(t.db);
    const TimeUs second_hour = k_start + k_us_per_hour;
    t.db.exec("DELETE FROM tick_block WHERE id = (SELECT max(id) FROM tick_block WHERE t0_us < " +
              std::to_string(second_hour + k_us_per_hour) +
              " AND t0_us >= " + std::to_string(second_hour) + ")");
    EXPECT_EQ(check_database(t.db), std::vector<std::string>{});
}

} // namespace db_check_test
} // namespace gua::store

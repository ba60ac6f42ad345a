// SPDX-License-Identifier: Apache-2.0
// Schema 7: rollups written before it (no identity evidence, card evidence without health totals)
// upgrade without losing a value and read back with their health unknown ("n/a", never 0 J).
#include "evidence_bytes.hpp"
#include "store/database.hpp"
#include "store/rollup.hpp"
#include "store/schema.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace rollup_health_test { // named after the file: unique in a unity batch

constexpr std::int64_t k_hour = 493776; // 2026-05-01T00:00:00Z

TEST(RollupHealth, SchemaSixRollupsUpgradeWithHealthUnknown) {
    testing::TempDir dir;
    {
        Database v6(dir.file("v6.db"), OpenMode::create);
        migrate_to(v6, 6);
        v6.exec("INSERT INTO gpu (id, uuid, idx, name) VALUES (1, 'GPU-1', 0, 'A100')");
        v6.exec("INSERT INTO identity (id, user) VALUES (1, 'alice')");
        Statement hour = v6.prepare(
            "INSERT INTO rollup_hour VALUES (?, 10, 100, 0, 3600000000, 0, 0, 0, ?, 30000000, ?, "
            "NULL)");
        hour.bind(1, std::int64_t{k_hour});
        hour.bind(2, k_hour * k_us_per_hour);
        hour.bind(3, (k_hour + 1) * k_us_per_hour);
        hour.run();
        Statement gpu = v6.prepare(
            "INSERT INTO rollup_gpu (hour, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
            "unmeasured_us, idle_us, underutilized_us, productive_us, compute_bound_us, evidence, "
            "first_t0_us, first_duration_us, last_end_us) VALUES (?, 1, 120, 3600000000, 0, 0, 0, "
            "0, 0, 0, 3600000000, ?, ?, 30000000, ?)");
        gpu.bind(1, std::int64_t{k_hour});
        gpu.bind_blob(2, testing::legacy_entry(25, 3'600'000'000)); // by snapshot, as v6 wrote it
        gpu.bind(3, k_hour * k_us_per_hour);
        gpu.bind(4, (k_hour + 1) * k_us_per_hour);
        gpu.run();
        Statement id = v6.prepare(
            "INSERT INTO rollup_identity (hour, gpu_id, identity_id, ticks, holder_ticks, "
            "active_us, idle_held_us, idle_held_mib_ms) VALUES (?, 1, 1, 120, 120, 3600000000, "
            "0, 0)");
        id.bind(1, std::int64_t{k_hour});
        id.run();
    }
    Database db(dir.file("v6.db"), OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    RollupReader reader(db, std::nullopt);
    std::vector<StoredRollup> hours;
    reader.hours(k_hour, k_hour + 1, hours);
    ASSERT_EQ(hours.size(), 1U);
    ASSERT_EQ(hours[0].totals.cards.size(), 1U);
    const audit::GpuTotals& card = hours[0].totals.cards[0].totals;
    EXPECT_EQ(card.states.active, 3'600'000'000) << "nothing recorded is lost";
    EXPECT_EQ(card.provenance.by_source_us[1], 3'600'000'000);
    EXPECT_EQ(card.health.energy.known_us(), 0) << "energy unknown, not 0 J";
    ASSERT_EQ(hours[0].totals.identities.size(), 1U);
    const audit::IdentityTotals& alice = hours[0].totals.identities[0].totals;
    EXPECT_EQ(alice.active_us, 3'600'000'000);
    EXPECT_EQ(alice.holder_ticks, 120U);
    EXPECT_EQ(alice.health, audit::IdentityHealth{});
}

} // namespace rollup_health_test
} // namespace gua::store

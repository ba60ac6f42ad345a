// SPDX-License-Identifier: Apache-2.0
// Schema 9: the rollups' evidence BLOBs in the compact format. The same workload stored as gua of
// schema 8 stored it ((number, 8 bytes) BLOBs) upgrades to exactly the BLOBs a schema 9 writer
// stores, and both report the same from their rollups alone, with the raw card-ticks' health.
#include "core/fatal.hpp"
#include "core/timezone.hpp"
#include "fleet_workload.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "schema_eight_file.hpp"
#include "store/block.hpp"
#include "store/reader.hpp"
#include "store/rollup.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <filesystem>

namespace gua::store {
namespace evidence_upgrade_test { // named after the file: unique in a unity batch

using testing::EvidenceTable;
using testing::k_evidence_tables;

/// Every row of `table` as (key, evidence BLOB), in key order.
std::vector<std::pair<std::string, std::string>> evidence_rows(Database& db,
                                                               const EvidenceTable& t) {
    std::vector<std::pair<std::string, std::string>> out;
    Statement st =
        db.prepare(fmt::format("SELECT {0}, evidence FROM {1} ORDER BY {0}", t.key, t.name));
    const int key_columns = t.card ? 2 : 3;
    while (st.step()) {
        std::string key;
        for (int c = 0; c < key_columns; ++c) {
            key += std::to_string(st.int64(c)) + " ";
        }
        out.emplace_back(key, std::string(st.blob(key_columns)));
    }
    return out;
}

/// The JSON report of [from, to) in `zone`.
std::string report_json(Database& db, TimeUs from, TimeUs to, const char* zone) {
    report::BuildOptions b;
    b.from = from;
    b.to = to;
    return report::render_json(report::build_report(db, b, TimeZone::load(zone).value()));
}

TEST(EvidenceUpgrade, SchemaEightFileOfTheSameWorkloadReportsTheSame) {
    testing::TempDir dir;
    const std::string new_path = dir.file("new.db");
    const std::string old_path = dir.file("old.db");
    bench::FleetOptions o;
    o.gpus = 4;
    o.ticks = 2 * 2880; // two days: hourly and daily rollups
    const TimeUs end = o.start + o.ticks * o.interval_us;
    audit::HealthTotals raw_cards;
    audit::IdentityHealth raw_identities;
    {
        Database db(new_path, OpenMode::create);
        migrate(db);
        Writer w(db, RunInfo{"fleet", "1", "synthetic:fleet", o.interval_us, 10, o.start});
        bench::generate_fleet(o, [&](const telemetry::Tick& tick) { w.write(tick); });
        w.finish(end);
        build_missing_rollups(db, end, audit::Thresholds{}); // the last hour too
        // The health totals of the raw card-ticks, summed over cards and over identities.
        audit::WindowAccumulator raw(audit::Thresholds{}, 0, [](TimeUs) {
            return std::pair{0, 0};
        });
        Reader(db).scan(o.start, end, [&](const audit::CardTick& c) { raw.add(c); });
        for (const audit::GpuTotals& g : raw.gpus()) {
            raw_cards += g.health;
        }
        for (const audit::IdentityTotals& i : raw.identities()) {
            raw_identities += i.health;
        }
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    ASSERT_GT(raw_cards.energy.known_us(), 0) << "the workload records energy";
    std::filesystem::copy_file(new_path, old_path);
    Database fresh(new_path, OpenMode::read_write);
    Database old(old_path, OpenMode::read_write);
    const std::int64_t compact_bytes = testing::evidence_bytes(old);
    testing::make_schema_eight(old);
    const std::int64_t legacy_bytes = testing::evidence_bytes(old);
    EXPECT_LT(compact_bytes * 2, legacy_bytes) << compact_bytes << " B, " << legacy_bytes << " B";
    EXPECT_THROW(check_readable(old), Fatal) << "a schema 8 file needs the upgrade";

    migrate(old);
    EXPECT_EQ(old.scalar("PRAGMA user_version"), k_schema_version);
    for (const EvidenceTable& t : k_evidence_tables) {
        const auto rows = evidence_rows(old, t);
        EXPECT_FALSE(rows.empty()) << t.name;
        EXPECT_EQ(rows, evidence_rows(fresh, t))
            << t.name << ": the BLOBs a schema 9 writer stores";
    }
    // Only the rollups left (as after raw retention): the report reads the evidence BLOBs.
    for (Database* db : {&fresh, &old}) {
        db->exec("DELETE FROM tick_block");
    }
    for (const char* zone : {"UTC", "America/New_York"}) { // daily rollups, then hourly ones
        SCOPED_TRACE(zone);
        const std::string after = report_json(fresh, o.start, end, zone);
        EXPECT_EQ(report_json(old, o.start, end, zone), after);
        const nlohmann::json health = nlohmann::json::parse(after).at("health");
        EXPECT_FALSE(health.at("energy").is_null()) << health.dump(1);
    }
    // The upgraded rollups hold the raw card-ticks' health totals, field for field.
    RollupReader reader(old, std::nullopt);
    std::vector<StoredRollup> hours;
    reader.hours(hour_of(o.start), hour_of(end), hours);
    ASSERT_EQ(hours.size(), 48U);
    audit::HealthTotals rolled_cards;
    audit::IdentityHealth rolled_identities;
    for (const StoredRollup& h : hours) {
        for (const audit::RollupCard& c : h.totals.cards) {
            rolled_cards += c.totals.health;
        }
        for (const audit::RollupIdentity& i : h.totals.identities) {
            rolled_identities += i.totals.health;
        }
    }
    EXPECT_EQ(rolled_cards, raw_cards);
    EXPECT_EQ(rolled_identities, raw_identities);
}

/// A schema 8 file whose rollups hold BLOBs of every age (before schema 4, before the health
/// totals, with them, identity rows with and without) upgrades value for value.
TEST(EvidenceUpgrade, BlobsOfEveryAgeUpgradeValueForValue) {
    testing::TempDir dir;
    const std::string path = dir.file("v8.db");
    const double headroom = 1234.5678; // no integer: its 8 bytes stay
    const std::string card_v3 = testing::legacy_entry(0, std::bit_cast<std::uint64_t>(2.0)) +
                                testing::legacy_entry(8, 3'600'000'000);
    const std::string card_v8 =
        testing::legacy_entry(5, std::bit_cast<std::uint64_t>(headroom)) +
        testing::legacy_entry(25, 3'600'000'000) + testing::legacy_entry(32, 900'000'000) +
        testing::legacy_entry(33, 3'600'000'000) + testing::legacy_entry(54, 1777593600000000) +
        testing::legacy_entry(75, 60'000'000);
    const std::string identity_v8 =
        testing::legacy_entry(0, 450'000'000) + testing::legacy_entry(1, 1'800'000'000);
    {
        Database db(path, OpenMode::create);
        migrate_to(db, 8);
        db.exec("INSERT INTO gpu (id, uuid, idx, name) VALUES (1, 'GPU-1', 0, 'A100'), "
                "(2, 'GPU-2', 1, 'A100')");
        Statement gpu = db.prepare(
            "INSERT INTO rollup_gpu (hour, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
            "unmeasured_us, idle_us, underutilized_us, productive_us, compute_bound_us, evidence, "
            "first_t0_us, first_duration_us, last_end_us) VALUES (?1, ?2, 120, 0, 0, 3600000000, "
            "0, 0, 0, 0, 0, ?3, ?1 * 3600000000, 30000000, (?1 + 1) * 3600000000)");
        const std::array<std::pair<std::int64_t, const std::string*>, 3> rows{
            {{1, &card_v3}, {2, &card_v8}, {2, nullptr}}};
        for (std::size_t k = 0; k < rows.size(); ++k) {
            gpu.bind(1, std::int64_t{493776} + static_cast<std::int64_t>(k));
            gpu.bind(2, rows[k].first);
            if (rows[k].second != nullptr) {
                gpu.bind_blob(3, *rows[k].second);
            } else {
                gpu.bind_null(3);
            }
            gpu.run();
        }
        Statement id = db.prepare(
            "INSERT INTO rollup_day_identity (day, gpu_id, identity_id, ticks, holder_ticks, "
            "active_us, idle_held_us, idle_held_mib_ms, evidence) VALUES (20574, ?, 1, 120, 120, "
            "0, 0, 0, ?)");
        id.bind(1, std::int64_t{1});
        id.bind_blob(2, identity_v8);
        id.run();
        id.bind(1, std::int64_t{2});
        id.bind_null(2); // written before schema 8
        id.run();
    }
    Database db(path, OpenMode::read_write);
    migrate(db);
    const auto card_rows = evidence_rows(db, k_evidence_tables[0]);
    ASSERT_EQ(card_rows.size(), 3U);
    EXPECT_EQ(
        testing::read_compact(card_rows[0].second, testing::is_card_double),
        (testing::EvidenceFields{{0, std::bit_cast<std::uint64_t>(2.0)}, {8, 3'600'000'000}}));
    EXPECT_EQ(testing::read_compact(card_rows[1].second, testing::is_card_double),
              (testing::EvidenceFields{{5, std::bit_cast<std::uint64_t>(headroom)},
                                       {25, 3'600'000'000},
                                       {32, 900'000'000},
                                       {33, 3'600'000'000},
                                       {54, 1777593600000000},
                                       {75, 60'000'000}}));
    // Marker, mask of groups 0, 3, 4, 6, 9 (2 bytes), 5 presence bytes; 5: raw (9 bytes); 25:
    // 36 × 10^8 (2); 32: 9 × 10^8 (2); 33: a copy (1); 54: 17775936 × 10^8 (5); 75: 6 × 10^7 (2).
    EXPECT_EQ(card_rows[1].second.size(), 1U + 2 + 5 + 9 + 2 + 2 + 1 + 5 + 2);
    EXPECT_EQ(card_v8.size(), 6U * 9U);
    EXPECT_EQ(card_rows[2].second, "") << "NULL stays NULL";
    EXPECT_EQ(db.scalar("SELECT count(*) FROM rollup_gpu WHERE evidence IS NULL"), 1);
    const auto identity_rows = evidence_rows(db, k_evidence_tables[3]);
    ASSERT_EQ(identity_rows.size(), 2U);
    EXPECT_EQ(testing::read_compact(identity_rows[0].second, testing::no_doubles),
              (testing::EvidenceFields{{0, 450'000'000}, {1, 1'800'000'000}}));
    EXPECT_EQ(db.scalar("SELECT count(*) FROM rollup_day_identity WHERE evidence IS NULL"), 1);
}

} // namespace evidence_upgrade_test
} // namespace gua::store

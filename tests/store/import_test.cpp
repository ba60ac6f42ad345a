// SPDX-License-Identifier: Apache-2.0
// gua import --from gpu-usage-audit: every gpu-usage-audit schema version, §1/§3/§5 equal to the
// tool's own math (computed here with its SQL), §2/§4 corrected, idempotence and intervals.
#include "core/fatal.hpp"
#include "core/timezone.hpp"
#include "prior_art_files.hpp"
#include "report/build.hpp"
#include "store/import.hpp"
#include "store/reader.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace gua {
namespace import_test { // named after the file: unique in a unity batch

using testing::PriorArtDb;
using testing::PriorVersion;

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // Fri 2026-05-01
constexpr DurationUs k_5min = 5 * k_us_per_minute;

/// gpu-usage-audit's §1/§3/§5 numbers, computed with its own SQL on its own file.
struct PriorNumbers {
    struct Shares {
        std::int64_t n = 0;
        double active = 0;
        double idle_held = 0;
        double truly_idle = 0;
    };
    Shares headline;
    std::map<std::string, Shares> gpus;
    std::map<std::pair<int, int>, double> heatmap;
};

PriorNumbers prior_numbers(const std::string& path) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    const std::string card_ticks =
        "(SELECT g.gpu_uuid AS uuid, g.ts AS ts, g.util_pct AS util, "
        "COALESCE(SUM(p.mem_used_mb), 0) AS mem FROM gpu_sample g LEFT JOIN proc_sample p "
        "ON p.gpu_uuid = g.gpu_uuid AND p.ts = g.ts GROUP BY g.rowid)";
    const std::string means = "count(*), avg(util >= 10), avg(util < 10 AND mem > 100), "
                              "avg(util < 10 AND mem <= 100)";
    PriorNumbers out;
    const auto query = [&](const std::string& sql, auto row) {
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
        while (sqlite3_step(st) == SQLITE_ROW) {
            row(st);
        }
        sqlite3_finalize(st);
    };
    const auto shares = [](sqlite3_stmt* st, int c) {
        return PriorNumbers::Shares{sqlite3_column_int64(st, c), sqlite3_column_double(st, c + 1),
                                    sqlite3_column_double(st, c + 2),
                                    sqlite3_column_double(st, c + 3)};
    };
    query("SELECT " + means + " FROM " + card_ticks,
          [&](sqlite3_stmt* st) { out.headline = shares(st, 0); });
    query("SELECT uuid, " + means + " FROM " + card_ticks + " GROUP BY uuid",
          [&](sqlite3_stmt* st) {
              out.gpus[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = shares(st, 1);
          });
    query("SELECT CAST(strftime('%w', substr(ts, 1, 19)) AS INTEGER), "
          "CAST(strftime('%H', substr(ts, 1, 19)) AS INTEGER), avg(util >= 10) FROM " +
              card_ticks + " GROUP BY 1, 2",
          [&](sqlite3_stmt* st) {
              out.heatmap[{sqlite3_column_int(st, 0), sqlite3_column_int(st, 1)}] =
                  sqlite3_column_double(st, 2);
          });
    sqlite3_close(db);
    return out;
}

report::ReportModel report_all(store::Database& db) {
    report::BuildOptions o;
    o.from = k_start - k_us_per_day;
    o.to = k_start + 30 * k_us_per_day;
    return report::build_report(db, o, TimeZone::load("UTC").value());
}

void expect_prior_sections(const PriorNumbers& prior, const report::ReportModel& m) {
    // gpu-usage-audit's jittered timestamps make consecutive rows overlap by a fraction of a
    // second; gua counts that time once (it never reports more than wall time), which moves the
    // shares by a few parts in 10^5 against gpu-usage-audit's own arithmetic.
    constexpr double eps = 1e-4;
    EXPECT_EQ(static_cast<std::int64_t>(m.samples), prior.headline.n);
    EXPECT_NEAR(m.headline.active, prior.headline.active, eps);
    EXPECT_NEAR(m.headline.idle_held, prior.headline.idle_held, eps);
    EXPECT_NEAR(m.headline.truly_idle, prior.headline.truly_idle, eps);
    ASSERT_EQ(m.gpus.size(), prior.gpus.size());
    for (const report::GpuRow& g : m.gpus) {
        const PriorNumbers::Shares& p = prior.gpus.at(g.uuid);
        EXPECT_EQ(static_cast<std::int64_t>(g.samples), p.n);
        EXPECT_NEAR(g.shares.active, p.active, eps);
        EXPECT_NEAR(g.shares.idle_held, p.idle_held, eps);
        EXPECT_NEAR(g.shares.truly_idle, p.truly_idle, eps);
    }
    for (int d = 0; d < 7; ++d) {
        for (int h = 0; h < 24; ++h) {
            const report::HeatCell& c =
                m.heatmap[static_cast<std::size_t>(d)][static_cast<std::size_t>(h)];
            const auto it = prior.heatmap.find({d, h});
            ASSERT_EQ(c.has_data, it != prior.heatmap.end()) << d << " " << h;
            if (c.has_data) {
                EXPECT_NEAR(c.active, it->second, 1e-3); // a trimmed row can move a cell more
            }
        }
    }
}

/// A file of `version`: rows from before its upgrade (no run) and rows after (one run).
void make_file(const std::string& path, PriorVersion version) {
    PriorArtDb f(path, version);
    f.add_host("oldhost");
    if (version != PriorVersion::v1_8_fresh) {
        testing::fill_workload(f, 3, 300, k_start, k_5min, std::nullopt, 1);
    }
    f.upgrade();
    if (f.has_runs()) {
        const TimeUs second = k_start + 2 * k_us_per_day;
        const std::int64_t run = f.add_run(second, 300.0);
        testing::fill_workload(f, 3, 300, second, k_5min, run, 2);
    }
    if (f.has_extra()) {
        for (int g = 0; g < 3; ++g) {
            f.add_device("GPU-" + std::to_string(g) + "f3c2a1b-1111-2222-3333-444455556666",
                         "NVIDIA A100");
        }
    }
}

class ImportVersion : public ::testing::TestWithParam<PriorVersion> {};

TEST_P(ImportVersion, PriorSectionsEqualAndImportIsIdempotent) {
    testing::TempDb t;
    const std::string old = t.dir.file("old.db");
    make_file(old, GetParam());
    const PriorNumbers prior = prior_numbers(old);
    const store::ImportSummary first = store::import_gpu_usage_audit(old, t.db, {});
    EXPECT_EQ(static_cast<std::int64_t>(first.card_ticks), prior.headline.n);
    EXPECT_EQ(first.gpus, 3U);
    const report::ReportModel m = report_all(t.db);
    expect_prior_sections(prior, m);
    // §2 corrected: idle-held and truly-idle hours are real card time (5-minute ticks).
    EXPECT_NEAR(m.headline.idle_held_hours,
                prior.headline.idle_held * static_cast<double>(prior.headline.n) / 12.0,
                1e-3 * static_cast<double>(prior.headline.n) / 12.0); // jitter counted once
    // §4 corrected: identities add up to the card-hours that existed, no double counting.
    double identity_hours = 0;
    for (const report::IdentityRow& r : m.identities) {
        identity_hours += r.gpu_hours;
    }
    EXPECT_NEAR(identity_hours, m.headline.active_hours + m.headline.idle_held_hours, 1e-6);
    EXPECT_GT(t.db.scalar("SELECT count(*) FROM rollup_hour"), 0);

    const std::uint64_t ticks = store::Reader(t.db).card_tick_count();
    const store::ImportSummary again = store::import_gpu_usage_audit(old, t.db, {});
    EXPECT_EQ(again.card_ticks, 0U);
    EXPECT_EQ(static_cast<std::int64_t>(again.skipped), prior.headline.n);
    EXPECT_EQ(store::Reader(t.db).card_tick_count(), ticks);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, ImportVersion,
                         ::testing::Values(PriorVersion::v0_4, PriorVersion::v1_0_3,
                                           PriorVersion::v1_1_migrated, PriorVersion::v1_4_migrated,
                                           PriorVersion::v1_8_fresh));

TEST(Import, InfersTheIntervalPerGpuOrTakesTheOverride) {
    testing::TempDb t;
    const std::string old = t.dir.file("old.db");
    {
        PriorArtDb f(old, PriorVersion::v0_4);
        testing::fill_workload(f, 2, 100, k_start, 10 * k_us_per_minute, std::nullopt, 3);
    }
    store::import_gpu_usage_audit(old, t.db, {});
    // Within the overlap of the jittered rows, counted once (see expect_prior_sections).
    EXPECT_NEAR(report_all(t.db).observed_card_hours, 200 * 10 / 60.0, 0.02);

    testing::TempDb u;
    store::ImportOptions o;
    o.interval = 30 * k_us_per_second;
    store::import_gpu_usage_audit(old, u.db, o);
    EXPECT_NEAR(report_all(u.db).observed_card_hours, 200 * 30 / 3600.0, 1e-9);
}

TEST(Import, TakesTheIntervalFromDaemonRun) {
    testing::TempDb t;
    const std::string old = t.dir.file("old.db");
    {
        PriorArtDb f(old, PriorVersion::v1_8_fresh);
        const std::int64_t run = f.add_run(k_start, 60.0);
        testing::fill_workload(f, 1, 50, k_start, k_5min, run, 4);
    }
    const store::ImportSummary s = store::import_gpu_usage_audit(old, t.db, {});
    EXPECT_EQ(s.recorded_interval_ticks, 50U);
    EXPECT_NEAR(report_all(t.db).observed_card_hours, 50 / 60.0, 1e-9);
}

TEST(Import, CorrectsSharedCardsGraphicsAndUnknownMemory) {
    testing::TempDb t;
    const std::string old = t.dir.file("old.db");
    {
        PriorArtDb f(old, PriorVersion::v1_8_fresh);
        const std::int64_t run = f.add_run(k_start, 3600.0);
        const std::string a = "GPU-a", b = "GPU-b", c = "GPU-c";
        const std::string ts = testing::isoformat(k_start);
        // A: alice and bob share an active card; B: only Xorg; C: a process of unknown memory.
        f.add_gpu(ts, a, 90, run, 0);
        f.add_proc(ts, a, 1, 8000, "alice", run);
        f.add_proc(ts, a, 2, 8000, "bob", run);
        f.add_gpu(ts, b, 0, run, 1);
        f.add_proc(ts, b, 3, 128, std::nullopt, run, "graphics");
        f.add_gpu(ts, c, 0, run, 2);
        f.add_proc(ts, c, 4, std::nullopt, "carol", run);
    }
    store::import_gpu_usage_audit(old, t.db, {});
    const report::ReportModel m = report_all(t.db);
    EXPECT_NEAR(m.headline.active_hours, 1.0, 1e-9);
    EXPECT_NEAR(m.headline.idle_held_hours, 1.0, 1e-9);  // C: unknown memory holds the card
    EXPECT_NEAR(m.headline.truly_idle_hours, 1.0, 1e-9); // B: graphics is not a holder
    std::map<std::string, double> hours;
    for (const report::IdentityRow& r : m.identities) {
        hours[r.name] = r.gpu_hours;
    }
    EXPECT_NEAR(hours["alice"], 0.5, 1e-9);
    EXPECT_NEAR(hours["bob"], 0.5, 1e-9);
    EXPECT_NEAR(hours["carol"], 1.0, 1e-9);
}

TEST(Import, ClassifiesWithTheConfiguredThresholds) {
    testing::TempDb t;
    const std::string old = t.dir.file("old.db");
    {
        PriorArtDb f(old, PriorVersion::v1_8_fresh);
        const std::int64_t run = f.add_run(k_start, 3600.0);
        f.add_gpu(testing::isoformat(k_start), "GPU-a", 50, run, 0); // 50 % for one hour
        f.add_proc(testing::isoformat(k_start), "GPU-a", 1, 8000, "alice", run);
    }
    const auto active_s = [](store::Database& db) {
        std::vector<audit::CardTick> ticks;
        store::Reader(db).scan(store::k_time_min, store::k_time_max,
                               [&](const audit::CardTick& c) { ticks.push_back(c); });
        EXPECT_EQ(ticks.size(), 1U);
        return ticks.empty() ? -1 : ticks[0].active_us.value_or(-1) / k_us_per_second;
    };
    store::import_gpu_usage_audit(old, t.db, {}); // the default: active from 10 %
    EXPECT_EQ(active_s(t.db), 3600);
    EXPECT_EQ(t.db.scalar("SELECT CAST(active_threshold_pct AS INTEGER) FROM run"), 10);

    testing::TempDb u;
    store::ImportOptions o;
    o.thresholds.active_util_pct = 60; // [thresholds] active_util_pct = 60: 50 % is not active
    store::import_gpu_usage_audit(old, u.db, o);
    EXPECT_EQ(active_s(u.db), 0);
    EXPECT_EQ(u.db.scalar("SELECT CAST(active_threshold_pct AS INTEGER) FROM run"), 60);
}

TEST(Import, RejectsFilesThatAreNotPriorArtDatabases) {
    testing::TempDb t;
    const std::string text = t.dir.file("notes.txt");
    std::ofstream(text) << "hello, this is not SQLite at all, just some text to fill a page\n";
    const std::string empty = t.dir.file("empty.db");
    {
        PriorArtDb f(empty, PriorVersion::v0_4);
        f.exec("DROP TABLE proc_sample");
    }
    for (const std::string& bad : {text, empty, t.dir.file("missing.db")}) {
        try {
            store::import_gpu_usage_audit(bad, t.db, {});
            ADD_FAILURE() << bad;
        } catch (const Fatal& e) {
            EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}

} // namespace import_test
} // namespace gua

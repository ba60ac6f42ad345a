// SPDX-License-Identifier: Apache-2.0
// Restart survival: counters restored from the database equal the counters fed live.
#include "export/exposition_parse.hpp"
#include "export/metrics.hpp"
#include "export/restore.hpp"
#include "export/ticks.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gua::exporter {
namespace {

using testing::card;
using testing::parse_exposition;
using testing::process;

class ExportRestore : public ::testing::Test {
  protected:
    std::string db_path() const { return m_dir.file("gua.db"); }

    test::TempDir m_dir;
};

/// Counter series only (the daemon's own health and the latest readings restart fresh).
std::map<std::string, double> counters(const std::string& text) {
    std::map<std::string, double> out;
    for (const auto& [series, value] : parse_exposition(text)) {
        if (testing::is_counter(series) && !series.starts_with("gua_daemon")) {
            out[series] = value;
        }
    }
    return out;
}

/// bob's process runs in container "trainer" of pod ml/train-0: its series carry the names.
telemetry::ProcessTick bobs_pod() {
    telemetry::ProcessTick p = process("bob", 1000, -1);
    p.identity.pod_uid = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    p.identity.container_id = std::string(64, 'c');
    p.identity.pod_namespace = "ml";
    p.identity.pod_name = "train-0";
    p.identity.container_name = "trainer";
    return p;
}

std::vector<telemetry::Tick> history() {
    std::vector<telemetry::Tick> ticks;
    const telemetry::ProcessTick bob = bobs_pod();
    for (int i = 0; i < 12; ++i) {
        telemetry::Tick t = testing::tick(i, 30);
        t.cards.push_back(card(0, 30, i % 4 == 0 ? 85.0 : 3.0,
                               {process("alice", 20000, i % 4 == 0 ? 80.0 : 0.0), bob}));
        t.cards.push_back(card(1, 30, i < 6 ? 0.0 : 55.0, {process("carol", 512, -1)}));
        t.cards.push_back(card(2, 30, 0, {}));
        ticks.push_back(t);
    }
    return ticks;
}

TEST_F(ExportRestore, RestoredCountersEqualLiveCounters) {
    MetricsOptions o;
    o.price_per_gpu_hour = 2.5;
    Metrics live(o);
    {
        store::Database db(db_path(), store::OpenMode::create);
        store::migrate(db);
        store::Writer writer(db, store::RunInfo{"h1", "550", "test", 30 * k_us_per_second, 10.0,
                                                testing::tick(0, 30).t0});
        for (const telemetry::Tick& t : history()) {
            writer.write(t);
            live.observe(t);
        }
    }
    store::Database db(db_path(), store::OpenMode::read_write);
    Metrics restored(o);
    EXPECT_EQ(restore_from_database(db, restored).card_ticks, 36u);

    const auto want = counters(live.render());
    const auto got = counters(restored.render());
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [series, value] : want) {
        ASSERT_TRUE(got.contains(series)) << series;
        EXPECT_NEAR(got.at(series), value, 1e-9 * std::max(1.0, std::abs(value))) << series;
    }
    EXPECT_GT(want.at("gua_identity_gpu_seconds_total{" + testing::who("alice") +
                      ",state=\"idle_held\"}"),
              0);
    EXPECT_GT(want.at(R"(gua_identity_gpu_seconds_total{user="bob",namespace="ml",pod="train-0",)"
                      R"(container="trainer",state="idle_held"})"),
              0)
        << "the pod's names come back from the identity table";
}

// Prometheus takes any decrease of a counter for a reset, so a restart must give back the live
// sums exactly, not nearly: readings that the database rounds (utilization to 0.01 %, power to
// whole watts) feed the live counters rounded the same way.
TEST_F(ExportRestore, RestoredCountersAreTheLiveOnesBitForBit) {
    MetricsOptions o;
    o.price_per_gpu_hour = 2.5;
    Metrics live(o);
    {
        store::Database db(db_path(), store::OpenMode::create);
        store::migrate(db);
        store::Writer writer(db, store::RunInfo{"h1", "550", "test", 30 * k_us_per_second, 10.0,
                                                testing::tick(0, 30).t0});
        for (int i = 0; i < 40; ++i) {
            telemetry::Tick t = testing::tick(i, 30);
            const double util = 37.777 + 13.131 * (i % 7);
            telemetry::CardTickRecord c = card(0, 30, util,
                                               {process("alice", 20000 + i, util * 0.6180339),
                                                process("bob", 333, util * 0.3819660)});
            c.util_pct = util + 0.004449; // a time-weighted mean: not a round number
            c.readings.power_mw = 210000 + 12345 * (i % 5);
            c.readings.power_limit_mw = 700499;
            t.cards.push_back(c);
            telemetry::CardTickRecord bursty = card(1, 30, 52.1234, {process("carol", 777, 49.99)});
            bursty.bucket_us = {14 * k_us_per_second + 123, 0, 0, 16 * k_us_per_second - 123};
            bursty.active_us = bursty.bucket_us[3];
            t.cards.push_back(bursty);
            writer.write(t);
            live.observe(t);
        }
    }
    store::Database db(db_path(), store::OpenMode::read_write);
    Metrics restored(o);
    restore_from_database(db, restored);
    const auto want = counters(live.render());
    const auto got = counters(restored.render());
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [series, value] : want) {
        ASSERT_TRUE(got.contains(series)) << series;
        EXPECT_EQ(got.at(series), value) << series;
    }
    EXPECT_GT(want.at(R"(gua_waste_pool_seconds_total{gpu="0",uuid="GPU-00000000-0000-0000-)"
                      R"(0000-000000000000",pool="headroom_under"})"),
              0);
    EXPECT_GT(want.at(R"(gua_waste_pool_seconds_total{gpu="1",uuid="GPU-00000000-0000-0000-)"
                      R"(0000-000000000001",pool="stall"})"),
              0);
}

TEST_F(ExportRestore, RestoreRanksUsersByRecordedSeconds) {
    {
        store::Database db(db_path(), store::OpenMode::create);
        store::migrate(db);
        store::Writer writer(db, store::RunInfo{"h1", "550", "test", 10 * k_us_per_second, 10.0,
                                                testing::tick(0, 10).t0});
        telemetry::Tick t = testing::tick(0, 10);
        t.cards.push_back(card(0, 10, 0, {process("small", 1000, 0), process("big", 8000, 0)}));
        t.cards.push_back(card(1, 10, 0, {process("medium", 4000, 0)}));
        writer.write(t);
    }
    store::Database db(db_path(), store::OpenMode::read_write);
    MetricsOptions o;
    o.max_users = 2;
    Metrics m(o);
    restore_from_database(db, m);
    // A new user after the restore finds no free label either.
    telemetry::Tick next = testing::tick(1, 10);
    next.cards.push_back(card(0, 10, 0, {process("newcomer", 1000, 0)}));
    m.observe(next);
    const auto series = parse_exposition(m.render());
    const auto held = [&](const std::string& user) {
        const std::string key =
            "gua_identity_gpu_seconds_total{" + testing::who(user) + ",state=\"idle_held\"}";
        return series.contains(key) ? series.at(key) : -1.0;
    };
    EXPECT_NEAR(held("big"), 10.0 * 8 / 9, 1e-6); // restored in whole µs
    EXPECT_DOUBLE_EQ(held("medium"), 10);
    EXPECT_DOUBLE_EQ(held("small"), -1);
    EXPECT_NEAR(held("other"), 10.0 / 9 + 10, 1e-6) << "small (restored) + newcomer (live)";
    // The per-card series fold the same way.
    const std::string card0 = R"(gua_gpu_user_seconds_total{gpu="0",uuid="GPU-00000000-0000-)"
                              R"(0000-0000-000000000000",user=)";
    EXPECT_FALSE(series.contains(card0 + R"("small",state="idle_held"})"));
    EXPECT_NEAR(series.at(card0 + R"("other",state="idle_held"})"), 10.0 / 9 + 10, 1e-6);
    EXPECT_NEAR(series.at(card0 + R"("big",state="idle_held"})"), 10.0 * 8 / 9, 1e-6);
}

TEST_F(ExportRestore, EmptyDatabaseRestoresNothing) {
    store::Database db(db_path(), store::OpenMode::create);
    store::migrate(db);
    Metrics m{MetricsOptions{}};
    EXPECT_EQ(restore_from_database(db, m).card_ticks, 0u);
    EXPECT_EQ(m.render().find("gua_gpu_seconds_total{"), std::string::npos);
}

// A malformed block (here: a negative tick count) is left out and named; the
// counters hold exactly the other blocks' card-ticks, and the restore does not throw.
TEST_F(ExportRestore, MalformedBlockIsSkippedAndNamed) {
    MetricsOptions o;
    Metrics second_hour(o);
    {
        store::Database db(db_path(), store::OpenMode::create);
        store::migrate(db);
        store::Writer writer(db, store::RunInfo{"h1", "550", "test", 30 * k_us_per_second, 10.0,
                                                testing::tick(0, 30).t0});
        // Two ticks in the first hour, three in the second (a block never spans hours).
        for (const int seq : {0, 1, 120, 121, 122}) {
            telemetry::Tick t = testing::tick(seq, 30);
            t.cards.push_back(card(0, 30, seq % 2 == 0 ? 85.0 : 0.0,
                                   {process("alice", 20000, seq % 2 == 0 ? 80.0 : 0.0)}));
            writer.write(t);
            if (seq >= 120) {
                second_hour.observe(t);
            }
        }
    }
    store::Database db(db_path(), store::OpenMode::read_write);
    const TimeUs hour_two = testing::tick(120, 30).t0;
    std::vector<std::int64_t> first_hour_blocks;
    store::Statement ids = db.prepare("SELECT id FROM tick_block WHERE t0_us < ? ORDER BY id");
    ids.bind(1, std::int64_t{hour_two});
    while (ids.step()) {
        first_hour_blocks.push_back(ids.int64(0));
    }
    ASSERT_FALSE(first_hour_blocks.empty());
    db.exec(fmt::format("UPDATE tick_block SET n_ticks = -1 WHERE t0_us < {}", hour_two));
    Metrics restored(o);
    const Restored r = restore_from_database(db, restored);
    EXPECT_EQ(r.card_ticks, 3u);
    EXPECT_EQ(r.bad_blocks, first_hour_blocks);
    const auto want = counters(second_hour.render());
    const auto got = counters(restored.render());
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [series, value] : want) {
        ASSERT_TRUE(got.contains(series)) << series;
        EXPECT_NEAR(got.at(series), value, 1e-9 * std::max(1.0, std::abs(value))) << series;
    }
    EXPECT_DOUBLE_EQ(
        got.at(
            R"(gua_gpu_card_ticks_total{gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000",model="NVIDIA H100 80GB HBM3"})"),
        3);
}

} // namespace
} // namespace gua::exporter

// SPDX-License-Identifier: Apache-2.0
// export::Metrics: the recommender's evidence (waste pools, card profiles, per-user time per
// card) against the pool definitions of audit/pools.hpp, worked out by hand; its time zone.
#include "export/exposition_parse.hpp"
#include "export/metrics.hpp"
#include "export/ticks.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gua::exporter {
namespace metrics_evidence_test { // named after the file: unique in a unity batch

using testing::card;
using testing::parse_exposition;
using testing::process;

constexpr double k_mib = 1024.0 * 1024.0;

std::string uuid(int index) {
    return "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(index);
}

/// `family`{gpu, uuid, `label`=`value`} of card `index`.
std::string series(const std::string& family, int index, const std::string& label,
                   const std::string& value) {
    return family + "{gpu=\"" + std::to_string(index) + "\",uuid=\"" + uuid(index) + "\"," + label +
           "=\"" + value + "\"}";
}

/// One 30 s tick at 2026-05-11T08:00:00Z, a Monday: before 09:00 in UTC, 13:30 in Kolkata.
/// GPU 0: carol holds 4 GiB, SMs cold (idle-held). GPU 1: alice steady at 40 % with 2000 MiB.
/// GPU 2: alice steady at 95 % drawing 500 of 700 W (compute-bound, not light). GPU 3: bob bursty,
/// half the tick at 0 % and half at 100 % (mean 50 %), holding 1000 MiB.
telemetry::Tick four_cards() {
    telemetry::Tick t = testing::tick(0, 30);
    t.cards.push_back(card(0, 30, 0, {process("carol", 4096, 0)}));
    t.cards.push_back(card(1, 30, 40, {process("alice", 2000, 40)}));
    telemetry::CardTickRecord busy = card(2, 30, 95, {process("alice", 6000, 95)});
    busy.readings.power_mw = 500000;
    busy.readings.power_limit_mw = 700000;
    t.cards.push_back(busy);
    telemetry::CardTickRecord bursty = card(3, 30, 50, {process("bob", 1000, 50)});
    bursty.bucket_us = {15 * k_us_per_second, 0, 0, 15 * k_us_per_second};
    bursty.active_us = 15 * k_us_per_second;
    t.cards.push_back(bursty);
    return t;
}

TEST(ExportEvidence, PoolsAndProfilesFollowTheirDefinitions) {
    Metrics m{MetricsOptions{}};
    m.observe(four_cards());
    const auto s = parse_exposition(m.render());
    const auto at = [&](const std::string& family, int index, const std::string& label,
                        const std::string& value) {
        const std::string key = series(family, index, label, value);
        EXPECT_TRUE(s.contains(key)) << key;
        return s.contains(key) ? s.at(key) : -1.0;
    };
    const auto pool = [&](int index, const char* name) {
        return at("gua_waste_pool_seconds_total", index, "pool", name);
    };
    EXPECT_DOUBLE_EQ(s.at(R"(gua_waste_pools_info{time_zone="UTC"})"), 1);

    // GPU 0: all of it idle-held before 09:00 UTC → held_off_hours.
    EXPECT_DOUBLE_EQ(pool(0, "held_off_hours"), 30);
    EXPECT_DOUBLE_EQ(pool(0, "held_office"), 0);
    EXPECT_DOUBLE_EQ(at("gua_gpu_measured_seconds_total", 0, "period", "off_hours"), 30);
    EXPECT_DOUBLE_EQ(at("gua_gpu_measured_seconds_total", 0, "period", "office"), 0);
    EXPECT_DOUBLE_EQ(at("gua_gpu_held_bytes_seconds_total", 0, "during", "idle_held"),
                     4096 * k_mib * 30);

    // GPU 1: steady at 40 %: 60 % of the tick is unused capacity below 70 %.
    EXPECT_DOUBLE_EQ(pool(1, "headroom_under"), 18);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_seconds_total", 1, "pattern", "steady_under"), 30);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_busy_seconds_total", 1, "pattern", "steady_under"), 12);
    EXPECT_DOUBLE_EQ(at("gua_gpu_held_bytes_seconds_total", 1, "during", "steady_under"),
                     2000 * k_mib * 30);
    EXPECT_DOUBLE_EQ(at("gua_gpu_held_bytes_seconds_total", 1, "during", "active_other"), 0);

    // GPU 2: steady at 95 % under load: busy time compute-bound, the 5 % headroom_busy.
    EXPECT_DOUBLE_EQ(pool(2, "compute_bound"), 28.5);
    EXPECT_NEAR(pool(2, "headroom_busy"), 1.5, 1e-9); // 30 s × (1 − 0.95), rounded
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_seconds_total", 2, "pattern", "steady_compute_bound"), 30);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_busy_seconds_total", 2, "pattern", "steady_compute_bound"),
                     28.5);
    EXPECT_DOUBLE_EQ(at("gua_gpu_held_bytes_seconds_total", 2, "during", "active_other"),
                     6000 * k_mib * 30);

    // GPU 3: bursty: its unused half is a data-loader stall, not idle-held waste.
    EXPECT_DOUBLE_EQ(pool(3, "stall"), 15);
    EXPECT_DOUBLE_EQ(pool(3, "held_off_hours"), 0);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_seconds_total", 3, "pattern", "bursty"), 30);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pattern_busy_seconds_total", 3, "pattern", "bursty"), 15);
    EXPECT_DOUBLE_EQ(at("gua_gpu_bursty_efficiency_seconds_total", 3, "bucket", "idle"), 15);
    EXPECT_DOUBLE_EQ(at("gua_gpu_bursty_efficiency_seconds_total", 3, "bucket", "compute_bound"),
                     15);
    EXPECT_DOUBLE_EQ(at("gua_gpu_held_bytes_seconds_total", 3, "during", "active_other"),
                     1000 * k_mib * 30);

    // Per user and card: who held what where.
    EXPECT_DOUBLE_EQ(s.at("gua_gpu_user_seconds_total{gpu=\"0\",uuid=\"" + uuid(0) +
                          "\",user=\"carol\",state=\"idle_held\"}"),
                     30);
    EXPECT_DOUBLE_EQ(s.at("gua_gpu_user_seconds_total{gpu=\"1\",uuid=\"" + uuid(1) +
                          "\",user=\"alice\",state=\"active\"}"),
                     30);
    EXPECT_DOUBLE_EQ(s.at("gua_gpu_user_seconds_total{gpu=\"3\",uuid=\"" + uuid(3) +
                          "\",user=\"bob\",state=\"idle_held\"}"),
                     15);
    EXPECT_FALSE(s.contains("gua_gpu_user_seconds_total{gpu=\"0\",uuid=\"" + uuid(0) +
                            "\",user=\"alice\",state=\"active\"}"))
        << "only the users that had time on a card";
}

TEST(ExportEvidence, OfficeHoursAreJudgedInTheConfiguredZone) {
    const Result<TimeZone> kolkata = TimeZone::load("Asia/Kolkata");
    if (!kolkata) {
        GTEST_SKIP() << "no tz database: " << kolkata.error().message;
    }
    MetricsOptions o;
    o.time_zone = kolkata.value();
    Metrics m(o);
    m.observe(four_cards());
    const auto s = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(s.at(R"(gua_waste_pools_info{time_zone="Asia/Kolkata"})"), 1);
    EXPECT_FALSE(s.contains(R"(gua_waste_pools_info{time_zone="UTC"})"));
    // 13:30 on a Monday in Kolkata: office hours.
    EXPECT_DOUBLE_EQ(s.at(series("gua_waste_pool_seconds_total", 0, "pool", "held_office")), 30);
    EXPECT_DOUBLE_EQ(s.at(series("gua_waste_pool_seconds_total", 0, "pool", "held_off_hours")), 0);
    EXPECT_DOUBLE_EQ(s.at(series("gua_gpu_measured_seconds_total", 0, "period", "office")), 30);
}

TEST(ExportEvidence, PerCardUserSeriesStayWithinTheUserLabels) {
    MetricsOptions o;
    o.max_users = 1;
    Metrics m(o);
    m.observe(four_cards());
    const auto s = parse_exposition(m.render());
    std::set<std::string> users;
    for (const auto& [key, value] : s) {
        if (key.starts_with("gua_gpu_user_seconds_total{")) {
            const std::size_t at = key.find("user=\"") + 6;
            users.insert(key.substr(at, key.find('"', at) - at));
        }
    }
    // carol (first seen) keeps her label; alice and bob share `other`.
    EXPECT_EQ(users, (std::set<std::string>{"carol", "other"}));
    EXPECT_DOUBLE_EQ(s.at("gua_gpu_user_seconds_total{gpu=\"2\",uuid=\"" + uuid(2) +
                          "\",user=\"other\",state=\"active\"}"),
                     30);
}

} // namespace metrics_evidence_test
} // namespace gua::exporter

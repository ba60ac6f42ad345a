// SPDX-License-Identifier: Apache-2.0
// export::Metrics: counters from the audit math, top-N users, gauges, health, exposition shape.
#include "export/exposition_parse.hpp"
#include "export/metrics.hpp"
#include "export/ticks.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gua::exporter {
namespace {

using testing::card;
using testing::parse_exposition;
using testing::process;
using testing::who;

MetricsOptions options(std::size_t max_users = 20) {
    MetricsOptions o;
    o.max_users = max_users;
    o.driver_version = "550.54.15";
    o.interval_us = 30 * k_us_per_second;
    return o;
}

TEST(ExportMetrics, SanitizesUserLabels) {
    EXPECT_EQ(sanitize_user("alice"), "alice");
    EXPECT_EQ(sanitize_user("uid:1234"), "uid:1234");
    EXPECT_EQ(sanitize_user("a b/c\"d"), "a_b_c_d");
    EXPECT_EQ(sanitize_user(""), "unknown");
    EXPECT_EQ(sanitize_user(std::string(100, 'x')).size(), 64u);
}

TEST(ExportMetrics, CountersFollowTheAuditMath) {
    Metrics m(options());
    // GPU 0 fully active, shared 3:1 by SM; GPU 1 idle, carol holds 4 GiB; GPU 2 free.
    telemetry::Tick tick = testing::tick(0, 30);
    tick.cards.push_back(card(0, 30, 100, {process("alice", 3000, 60), process("bob", 1000, 20)}));
    tick.cards.push_back(card(1, 30, 0, {process("carol", 4096, 0)}));
    tick.cards.push_back(card(2, 30, 0, {}));
    m.observe(tick);
    const auto series = parse_exposition(m.render());

    const std::string g0 = R"({gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000",)"
                           R"(model="NVIDIA H100 80GB HBM3",state=)";
    EXPECT_DOUBLE_EQ(series.at("gua_gpu_seconds_total" + g0 + "\"active\"}"), 30);
    EXPECT_DOUBLE_EQ(series.at("gua_gpu_seconds_total" + g0 + "\"idle_held\"}"), 0);
    EXPECT_EQ(series.count("gua_gpu_seconds_total" + g0 + "\"unmeasured\"}"), 0u);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_seconds_total{gpu="1",uuid="GPU-00000000-0000-0000-)"
                               R"(0000-000000000001",model="NVIDIA H100 80GB HBM3",)"
                               R"(state="idle_held"})"),
                     30);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_seconds_total{gpu="2",uuid="GPU-00000000-0000-0000-)"
                               R"(0000-000000000002",model="NVIDIA H100 80GB HBM3",)"
                               R"(state="truly_idle"})"),
                     30);
    EXPECT_DOUBLE_EQ(
        series.at("gua_identity_gpu_seconds_total{" + who("alice") + ",state=\"active\"}"), 22.5);
    EXPECT_DOUBLE_EQ(
        series.at("gua_identity_gpu_seconds_total{" + who("bob") + ",state=\"active\"}"), 7.5);
    EXPECT_DOUBLE_EQ(
        series.at("gua_identity_gpu_seconds_total{" + who("carol") + ",state=\"idle_held\"}"), 30);
    EXPECT_DOUBLE_EQ(series.at("gua_identity_idle_held_bytes_seconds_total{" + who("carol") + "}"),
                     4096.0 * 1024 * 1024 * 30);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_efficiency_seconds_total{gpu="0",bucket="compute_bound"})"),
                     30);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_efficiency_seconds_total{gpu="1",bucket="idle"})"), 30);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_card_ticks_total{gpu="0",uuid="GPU-00000000-0000-)"
                               R"(0000-0000-000000000000",model="NVIDIA H100 80GB HBM3"})"),
                     1);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_utilization_ratio{gpu="0",uuid="GPU-00000000-0000-)"
                               R"(0000-0000-000000000000"})"),
                     1.0);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_memory_used_bytes{gpu="1",uuid="GPU-00000000-0000-)"
                               R"(0000-0000-000000000001"})"),
                     4096.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_gpu_power_watts{gpu="1",uuid="GPU-00000000-0000-0000-)"
                               R"(0000-000000000001"})"),
                     60.5);
    EXPECT_EQ(series.count("gua_waste_dollars_total{gpu=\"1\",state=\"idle_held\"}"), 0u)
        << "no price, no dollars (missing is not zero)";
    EXPECT_EQ(series.count(R"(gua_gpu_info{gpu="2",uuid="GPU-00000000-0000-0000-0000-)"
                           R"(000000000002",model="NVIDIA H100 80GB HBM3",driver="550.54.15"})"),
              1u);
}

TEST(ExportMetrics, WasteDollarsAtThePrice) {
    MetricsOptions o = options();
    o.price_per_gpu_hour = 3.6;
    Metrics m(o);
    telemetry::Tick tick = testing::tick(0, 3600);
    tick.cards.push_back(card(0, 3600, 0, {process("carol", 4096, 0)}));
    tick.cards.push_back(card(1, 3600, 0, {}));
    m.observe(tick);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(series.at(R"(gua_waste_dollars_total{gpu="0",state="idle_held"})"), 3.6);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_waste_dollars_total{gpu="0",state="truly_idle"})"), 0);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_waste_dollars_total{gpu="1",state="truly_idle"})"), 3.6);
}

TEST(ExportMetrics, TopUsersKeepTheirLabelAndTheRestAreOther) {
    Metrics m(options(2));
    for (int i = 0; i < 3; ++i) {
        telemetry::Tick tick = testing::tick(i, 10);
        tick.cards.push_back(card(0, 10, 0, {process("u1", 1000, 0), process("u2", 1000, 0)}));
        tick.cards.push_back(card(1, 10, 0, {process("u3", 1000, 0), process("u4", 3000, 0)}));
        m.observe(tick);
    }
    const auto series = parse_exposition(m.render());
    const auto held = [&](const std::string& user) {
        return series.at("gua_identity_gpu_seconds_total{" + who(user) + ",state=\"idle_held\"}");
    };
    EXPECT_DOUBLE_EQ(held("u1"), 15);
    EXPECT_DOUBLE_EQ(held("u2"), 15);
    EXPECT_DOUBLE_EQ(held("other"), 30) << "u3 and u4 arrived after the two labels were given";
    EXPECT_EQ(series.count("gua_identity_gpu_seconds_total{" + who("u3") + ",state=\"idle_held\"}"),
              0u);
    EXPECT_DOUBLE_EQ(series.at("gua_identity_card_ticks_total{" + who("other") + "}"), 6);
}

TEST(ExportMetrics, ActiveTimeWithoutProcessGoesToNoProcess) {
    Metrics m(options());
    telemetry::Tick tick = testing::tick(0, 10);
    tick.cards.push_back(card(0, 10, 50, {}));
    m.observe(tick);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(
        series.at("gua_identity_gpu_seconds_total{" + who("(no process)") + ",state=\"active\"}"),
        10);
}

TEST(ExportMetrics, CountersNeverDecreaseAndSeriesAreUnique) {
    Metrics m(options(1));
    std::map<std::string, double> previous;
    for (int i = 0; i < 20; ++i) {
        telemetry::Tick tick = testing::tick(i, 5);
        const std::string user = "user" + std::to_string(i % 4);
        tick.cards.push_back(
            card(0, 5, (i % 3) * 40.0, {process(user, 500 + 100 * i, i % 2 * 30)}));
        if (i % 5 != 0) {
            tick.cards.push_back(card(1, 5, 95, {process("user9", 100, 95)}));
        }
        m.observe(tick);
        Health h;
        h.ticks = static_cast<std::uint64_t>(i + 1);
        m.set_health(h);
        const std::string text = m.render();
        const auto series = parse_exposition(text); // asserts unique series and HELP/TYPE order
        for (const auto& [name, value] : series) {
            if (testing::is_counter(name) && previous.contains(name)) {
                EXPECT_GE(value, previous[name]) << name << " at tick " << i;
            }
        }
        for (const auto& [name, value] : previous) {
            if (testing::is_counter(name) && !name.starts_with("gua_daemon")) {
                EXPECT_TRUE(series.contains(name)) << name << " vanished at tick " << i;
            }
        }
        previous = series;
    }
    EXPECT_DOUBLE_EQ(previous.at("gua_daemon_ticks_total"), 20);
}

TEST(ExportMetrics, LatestReadingsOnlyForCardsOfTheLatestTick) {
    Metrics m(options());
    telemetry::Tick first = testing::tick(0, 5);
    first.cards.push_back(card(0, 5, 0, {}));
    first.cards.push_back(card(1, 5, 0, {}));
    m.observe(first);
    telemetry::Tick second = testing::tick(1, 5);
    second.cards.push_back(card(0, 5, 0, {}));
    m.observe(second);
    const std::string text = m.render();
    EXPECT_EQ(text.find(R"(gua_gpu_power_watts{gpu="1")"), std::string::npos);
    EXPECT_NE(text.find(R"(gua_gpu_power_watts{gpu="0")"), std::string::npos);
    EXPECT_NE(text.find(R"(gua_gpu_card_ticks_total{gpu="1")"), std::string::npos)
        << "counters of a card that left stay";
}

// Every field of card_fields.def with a family: a gauge shows the latest tick's reading, a counter
// the sum over ticks, both in base units; a field never read has no series (not a 0).
TEST(ExportMetrics, EveryCardFieldFeedsItsFamily) {
    Metrics m(options());
    const auto value_of = [](const telemetry::CardFieldInfo& f, int k) {
        return (static_cast<std::int64_t>(f.field) + 1) * 1000 * (k + 1);
    };
    for (int k = 0; k < 3; ++k) {
        telemetry::Tick t = testing::tick(k, 30);
        t.cards.push_back(card(0, 30, 50, {}));
        t.cards.push_back(card(1, 30, 50, {}));
        t.cards[1].readings = telemetry::CardReadings{}; // card 1 reads nothing
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            t.cards[0].readings.*f.value = value_of(f, k);
        }
        m.observe(t);
    }
    const auto series = parse_exposition(m.render());
    const std::string uuid0 = "GPU-00000000-0000-0000-0000-000000000000";
    const std::string uuid1 = "GPU-00000000-0000-0000-0000-000000000001";
    std::size_t checked = 0;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.metric_kind == telemetry::MetricKind::none) {
            continue;
        }
        std::string extra;
        if (const std::size_t eq = f.metric_label.find('='); eq != std::string_view::npos) {
            extra = fmt::format(",{}=\"{}\"", f.metric_label.substr(0, eq),
                                f.metric_label.substr(eq + 1));
        }
        const auto name = [&](const std::string& gpu, const std::string& uuid) {
            return fmt::format("{}{{gpu=\"{}\",uuid=\"{}\"{}}}", f.metric, gpu, uuid, extra);
        };
        const double expected =
            f.metric_kind == telemetry::MetricKind::gauge
                ? static_cast<double>(value_of(f, 2)) * f.metric_scale
                : static_cast<double>(value_of(f, 0) + value_of(f, 1) + value_of(f, 2)) *
                      f.metric_scale;
        ASSERT_EQ(series.count(name("0", uuid0)), 1U) << name("0", uuid0);
        EXPECT_DOUBLE_EQ(series.at(name("0", uuid0)), expected) << f.id;
        EXPECT_EQ(series.count(name("1", uuid1)), 0U) << f.id << ": no reading, no series";
        ++checked;
    }
    EXPECT_GE(checked, 3U);
}

// The health families by name and unit, written out here rather than taken from the field table:
// limits, clocks, temperatures and memory are the latest tick's, energy and clocks-event time the
// sum over ticks, in joules and seconds.
TEST(ExportMetrics, HealthFamiliesInBaseUnits) {
    Metrics m(options());
    for (int k = 0; k < 3; ++k) {
        telemetry::Tick t = testing::tick(k, 30);
        t.cards.push_back(card(0, 30, 50, {}));
        telemetry::CardReadings& r = t.cards[0].readings;
        r.power_limit_mw = k < 2 ? 400000 : 350000;
        r.energy_mj = 9000000 + 1000 * k;
        r.max_sm_clock_mhz = 1980;
        r.sm_clock_mhz = 1410;
        r.mem_temperature_c = 60 + k;
        r.mem_reserved_mib = 512;
        r.ghost_mib = 2048;
        r.ecc_uncorrected = k;
        r.remapped_rows_cor = 3;
        r.remapped_rows_unc = 1;
        r.remap_pending = 0;
        r.clocks_sw_power_cap_us = k == 1 ? 15 * k_us_per_second : 30 * k_us_per_second;
        r.clocks_hw_thermal_us = k == 2 ? 30 * k_us_per_second : 0;
        m.observe(t);
    }
    const auto series = parse_exposition(m.render());
    const std::string card0 = R"(gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000")";
    const auto at = [&](const std::string& family, const std::string& extra = "") {
        const std::string name = family + "{" + card0 + extra + "}";
        EXPECT_EQ(series.count(name), 1U) << name;
        return series.count(name) != 0 ? series.at(name) : -1.0;
    };
    EXPECT_DOUBLE_EQ(at("gua_gpu_power_limit_watts"), 350);
    EXPECT_DOUBLE_EQ(at("gua_gpu_energy_joules_total"), 27003);
    EXPECT_DOUBLE_EQ(at("gua_gpu_sm_clock_max_hertz"), 1980e6);
    EXPECT_DOUBLE_EQ(at("gua_gpu_sm_clock_hertz"), 1410e6);
    EXPECT_DOUBLE_EQ(at("gua_gpu_memory_temperature_celsius"), 62);
    EXPECT_DOUBLE_EQ(at("gua_gpu_memory_reserved_bytes"), 512.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(at("gua_gpu_memory_ghost_bytes"), 2048.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(at("gua_gpu_ecc_uncorrected_errors"), 2);
    EXPECT_DOUBLE_EQ(at("gua_gpu_remapped_rows", R"(,kind="correctable")"), 3);
    EXPECT_DOUBLE_EQ(at("gua_gpu_remapped_rows", R"(,kind="uncorrectable")"), 1);
    EXPECT_DOUBLE_EQ(at("gua_gpu_row_remap_pending"), 0);
    EXPECT_DOUBLE_EQ(at("gua_gpu_clock_event_seconds_total", R"(,reason="sw_power_cap")"), 75);
    EXPECT_DOUBLE_EQ(at("gua_gpu_clock_event_seconds_total", R"(,reason="hw_thermal")"), 30);
    EXPECT_EQ(series.count("gua_gpu_clock_event_seconds_total{" + card0 + R"(,reason="gpu_idle"})"),
              0U)
        << "never read: no series";
}

// The GPM families by name, as 0-1 ratios of the latest tick; a metric the card did not measure
// (pre-Hopper, NOT_SUPPORTED) has no series rather than 0.
TEST(ExportMetrics, GpmFamiliesAreRatiosOfTheLatestTick) {
    Metrics m(options());
    for (int k = 0; k < 2; ++k) {
        telemetry::Tick t = testing::tick(k, 30);
        t.cards.push_back(card(0, 30, 50, {}));
        telemetry::CardReadings& r = t.cards[0].readings;
        r.sm_active_cpct = k == 0 ? 9000 : 4550;
        r.sm_occupancy_cpct = 1230;
        r.tensor_active_cpct = 0;
        r.dram_bw_cpct = 7000;
        r.fp64_active_cpct = 10;
        r.fp32_active_cpct = 2500;
        m.observe(t);
    }
    const auto series = parse_exposition(m.render());
    const std::string card0 = R"(gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000")";
    const auto at = [&](const std::string& family, const std::string& extra = "") {
        const std::string name = family + "{" + card0 + extra + "}";
        EXPECT_EQ(series.count(name), 1U) << name;
        return series.count(name) != 0 ? series.at(name) : -1.0;
    };
    EXPECT_DOUBLE_EQ(at("gua_gpu_sm_active_ratio"), 0.455);
    EXPECT_DOUBLE_EQ(at("gua_gpu_sm_occupancy_ratio"), 0.123);
    EXPECT_DOUBLE_EQ(at("gua_gpu_tensor_active_ratio"), 0);
    EXPECT_DOUBLE_EQ(at("gua_gpu_dram_bandwidth_ratio"), 0.7);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pipe_active_ratio", R"(,pipe="fp64")"), 0.001);
    EXPECT_DOUBLE_EQ(at("gua_gpu_pipe_active_ratio", R"(,pipe="fp32")"), 0.25);
    EXPECT_EQ(series.count("gua_gpu_pipe_active_ratio{" + card0 + R"(,pipe="fp16"})"), 0U)
        << "not measured: no series";
}

} // namespace
} // namespace gua::exporter

// SPDX-License-Identifier: Apache-2.0
// The families of gua's /metrics round-trip without any Prometheus: a daemon's exposition,
// rendered by the exporter, is answered as Prometheus would answer an instant query for every
// series and read back through the fleet reader's own parser (prometheus/answer.hpp). Every
// family of telemetry/exported_families.def comes back with its TYPE, HELP and label names, and
// every family the fleet reader queries is there with the labels it keeps.
#include "export/metrics.hpp"
#include "export/ticks.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"
#include "report/build.hpp"
#include "telemetry/card_fields.hpp"
#include "telemetry/exported_families.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gua::exporter {
namespace families_round_trip_test { // named after the file: unique in a unity batch

using nlohmann::json;
using testing::card;
using testing::process;

constexpr DurationUs k_s = k_us_per_second;

/// A daemon's /metrics after one 30 s tick: GPU 0 in use by alice (and an Xid on it), GPU 1 idle
/// and owned by a Slurm job of bob's, a price for the dollar counters, and the daemon's health.
std::string daemon_metrics() {
    MetricsOptions o;
    o.interval_us = 30 * k_s;
    o.price_per_gpu_hour = 2.0;
    o.driver_version = "550.54.15";
    Metrics m(o);
    telemetry::Tick t = testing::tick(0, 30);
    telemetry::CardTickRecord busy = card(0, 30, 40, {process("alice", 2000, 40)});
    // Every §9 reading, so that each health family has its series.
    telemetry::CardReadings& r = busy.readings;
    r.energy_mj = 9'000'000;
    r.power_mw = 300'000;
    r.power_limit_mw = 700'000;
    r.clocks_sw_power_cap_us = 10 * k_s;
    r.sm_clock_mhz = 1410;
    r.max_sm_clock_mhz = 1980;
    r.mem_used_mib = 2000;
    r.mem_total_mib = 81920;
    r.ghost_mib = 500;
    r.sm_active_cpct = 4000;
    t.cards.push_back(busy);
    telemetry::CardTickRecord held = card(1, 30, 0, {});
    held.allocation.allocated_us = 30 * k_s;
    held.allocation.unused_us = 30 * k_s;
    held.allocations.push_back({"slurm-job", "7", "bob", "physics", t.t0, t.t0 + 30 * k_s});
    t.cards.push_back(held);
    m.observe(t);
    m.add_faults("GPU-00000000-0000-0000-0000-000000000000", 43, 1); // an Xid on GPU 0
    Health h;
    h.ticks = 1;
    h.started = t.t0;
    h.last_tick_end = t.t0 + t.duration_us;
    h.wal_bytes = 4096;
    h.deliveries = {{"smtp", 1, 0, 0, 2}}; // a notification delivered after two retries
    m.set_health(h);
    return m.render();
}

/// One sample line of the text format: its family, labels in the order written, value.
struct Sample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    std::string value;
};

/// The samples of `text`, and each family's TYPE and HELP lines.
struct Exposition {
    std::vector<Sample> samples;
    std::map<std::string, std::string> type;
    std::map<std::string, std::string> help;
};

Exposition parse_text(const std::string& text) {
    Exposition out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        for (const char* kind : {"# TYPE ", "# HELP "}) {
            if (line.starts_with(kind)) {
                const std::size_t name_end = line.find(' ', 7);
                (kind[2] == 'T' ? out.type : out.help)[line.substr(7, name_end - 7)] =
                    line.substr(name_end + 1);
            }
        }
        if (line.starts_with("#")) {
            continue;
        }
        Sample s;
        std::size_t at = line.find_first_of("{ ");
        s.name = line.substr(0, at);
        if (line[at] == '{') {
            while (line[at] != '}') {
                const std::size_t eq = line.find('=', at + 1);
                const std::string label = line.substr(at + 1, eq - at - 1);
                std::string value;
                std::size_t i = eq + 2; // past ="
                for (; line[i] != '"'; ++i) {
                    value += line[i] == '\\' ? line[++i] : line[i];
                }
                s.labels.emplace_back(label, value);
                at = i + 1; // at ',' or '}'
            }
            ++at;
        }
        s.value = line.substr(at + 1);
        out.samples.push_back(s);
    }
    return out;
}

/// The samples as the body of Prometheus's answer to an instant query that matches them all.
std::string as_prometheus_answer(const std::vector<Sample>& samples) {
    json result = json::array();
    for (const Sample& s : samples) {
        json metric{{"__name__", s.name}};
        for (const auto& [k, v] : s.labels) {
            metric[k] = v;
        }
        result.push_back({{"metric", metric}, {"value", {1778486430.0, s.value}}});
    }
    return json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}
        .dump();
}

const telemetry::ExportedFamily* row_of(const std::string& name) {
    for (const telemetry::ExportedFamily& f : telemetry::k_exported_families) {
        if (f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

TEST(ExportFamilies, EveryFamilyRoundTripsThroughTheFleetReadersParser) {
    const Exposition text = parse_text(daemon_metrics());
    // Read back as the fleet reader reads Prometheus: label names per family, by series.
    std::map<std::string, std::set<std::vector<std::string>>> names_of;
    std::size_t series = 0;
    report::parse_answer(report::PromAnswer{200, as_prometheus_answer(text.samples)},
                         "http://prometheus.test:9090",
                         [&](report::PromLabels& labels, std::vector<std::pair<TimeUs, double>>&) {
                             std::vector<std::string> names;
                             for (const auto& [k, v] : labels) {
                                 if (k != "__name__") {
                                     names.push_back(k);
                                 }
                             }
                             names_of[labels.at("__name__")].insert(names);
                             ++series;
                         });
    EXPECT_EQ(series, text.samples.size());
    for (const telemetry::ExportedFamily& f : telemetry::k_exported_families) {
        const std::string name(f.name);
        SCOPED_TRACE(name);
        EXPECT_EQ(text.type.at(name),
                  f.kind == telemetry::MetricKind::counter ? "counter" : "gauge");
        EXPECT_EQ(text.help.at(name), f.help);
        std::vector<std::string> sorted = telemetry::family_labels(f.id);
        std::sort(sorted.begin(), sorted.end());
        // Every series of the family carries exactly the table's labels (PromLabels sort them).
        EXPECT_EQ(names_of[name], (std::set<std::vector<std::string>>{sorted}));
    }
    // In the text, in the table's order; a family outside the table is a per-card reading.
    for (const Sample& s : text.samples) {
        if (const telemetry::ExportedFamily* f = row_of(s.name)) {
            std::vector<std::string> written;
            for (const auto& [k, v] : s.labels) {
                written.push_back(k);
            }
            EXPECT_EQ(written, telemetry::family_labels(f->id)) << s.name;
            continue;
        }
        bool card_field = false;
        for (const telemetry::CardFieldInfo& c : telemetry::k_card_fields) {
            card_field = card_field || c.metric == s.name;
        }
        EXPECT_TRUE(card_field) << s.name << " is in no table";
    }
}

TEST(ExportFamilies, TheFleetReaderQueriesExportedFamiliesWithTheirLabels) {
    const auto check = [](const std::string& name, const std::vector<std::string>& kept,
                          telemetry::MetricKind kind, bool pod_series) {
        SCOPED_TRACE(name);
        const telemetry::ExportedFamily* f = row_of(name);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->kind, kind);
        const std::vector<std::string> labels = telemetry::family_labels(f->id);
        for (const std::string& k : kept) {
            EXPECT_NE(std::find(labels.begin(), labels.end(), k), labels.end()) << k;
        }
        if (pod_series) { // read apart by these labels (prometheus/counters.hpp)
            for (const char* k : {"namespace", "pod", "container"}) {
                EXPECT_NE(std::find(labels.begin(), labels.end(), k), labels.end()) << k;
            }
        }
    };
    for (const report::CounterFamily& c : report::gua_counter_families()) {
        check(c.name, c.labels, telemetry::MetricKind::counter, c.pod_series);
    }
    for (const report::GaugeFamily& g : report::gua_gauge_families()) {
        check(g.name, g.labels, telemetry::MetricKind::gauge, false);
    }
}

// §9 of a fleet report from the exposition alone: the health counters of daemon_metrics()'s one
// 30 s tick, read back as a fleet report reads increases, give GPU 0's figures worked out by hand
// from the tick's readings.
TEST(ExportFamilies, HealthCountersGiveTheFleetReportTheCardsHealth) {
    const Exposition text = parse_text(daemon_metrics());
    report::CounterTotals totals;
    for (const Sample& s : text.samples) {
        report::PromLabels labels{{"instance", "host-a"}};
        for (const auto& [k, v] : s.labels) {
            labels[k] = v;
        }
        totals.increase[s.name].push_back(report::PromSample{labels, std::stod(s.value)});
    }
    report::ReportModel m;
    for (int i = 0; i < 2; ++i) {
        report::GpuRow g;
        g.index = i;
        g.uuid = testing::card(i, 30, 0, {}).device.uuid;
        g.host = "host-a";
        m.gpus.push_back(g);
    }
    std::vector<report::FleetCard> cards(2);
    cards[0].states.active = 30 * k_s;
    cards[1].states.allocated_unused = 30 * k_s;
    report::fill_fleet_health(m, totals, "instance", cards, report::BuildOptions{});
    ASSERT_TRUE(m.health);
    const report::GpuHealthRow& g = m.health->gpus.at(0);
    EXPECT_DOUBLE_EQ(*g.energy.kwh, 9000.0 / 3.6e6); // 9,000,000 mJ
    EXPECT_DOUBLE_EQ(g.energy.state_kwh[0], 9000.0 / 3.6e6) << "all of it active";
    EXPECT_DOUBLE_EQ(g.energy.counter_hours, 30.0 / 3600);
    EXPECT_DOUBLE_EQ(*g.throttle.reason_share[0], 10.0 / 30) << "power cap 10 s of 30 s";
    EXPECT_DOUBLE_EQ(*g.throttle.clock_ratio, 1410.0 / 1980);
    EXPECT_DOUBLE_EQ(g.memory.known_hours, 30.0 / 3600);
    EXPECT_DOUBLE_EQ(*g.memory.pressure_share, 0) << "2000 of 81920 MiB";
    EXPECT_NEAR(*g.memory.ghost_gib_hours, 500.0 / 1024 * 30 / 3600, 1e-12);
    EXPECT_FALSE(g.memory.ghost_first) << "counters carry no time of first sight";
    EXPECT_NEAR(*g.gpm.mean[0], 0.40, 1e-12);
    EXPECT_EQ(g.light.by, "gpm");
    EXPECT_DOUBLE_EQ(*g.light.share, 0) << "SM active 40 % is not light";
    // GPU 1 read no energy counter: 60.5 W (export/ticks.hpp), kept in whole watts as the
    // database keeps it (card_fields.def), × 30 s.
    EXPECT_DOUBLE_EQ(*m.health->gpus.at(1).energy.kwh, 61.0 * 30 / 3.6e6);
    EXPECT_DOUBLE_EQ(m.health->gpus.at(1).energy.power_hours, 30.0 / 3600);
    // The findings name the host; ghost memory's has no dates.
    ASSERT_EQ(m.health->findings.size(), 2u);
    EXPECT_EQ(m.health->findings[0].id, "power-capping");
    EXPECT_TRUE(m.health->findings[0].detail.starts_with("host-a: GPU 0: "));
    EXPECT_EQ(m.health->findings[1].id, "ghost-memory");
    EXPECT_EQ(m.health->findings[1].detail.find("seen from"), std::string::npos);
}

} // namespace families_round_trip_test
} // namespace gua::exporter

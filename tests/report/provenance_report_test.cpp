// SPDX-License-Identifier: Apache-2.0
// The report's honesty about measurement: overlapping runs for one GPU counted once, MIG
// instances as unmeasured capacity priced by their slice fraction, the four headline shares
// adding up to 100 %, and the verdict's wording when unmeasured time could change it.
#include "audit/waste.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "report/shares.hpp"
#include "store/temp_db.hpp"
#include "store/writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

namespace gua::report {
namespace {

constexpr TimeUs k_start = 1'777'852'800 * k_us_per_second + 10 * k_us_per_hour; // Mon 10:00Z
constexpr DurationUs k_five = 5 * k_us_per_second;

telemetry::CardTickRecord plain(int index, DurationUs active) {
    telemetry::CardTickRecord c;
    c.device.uuid = "GPU-0000000" + std::to_string(index) + "-aaaa-bbbb-cccc-0123456789ab";
    c.device.index = index;
    c.device.name = "NVIDIA A100-SXM4-80GB";
    c.device.memory_total_mib = 81920;
    c.util_source = telemetry::UtilSource::samples;
    c.active_us = active;
    c.util_pct = active > 0 ? 100.0 : 0.0;
    c.bucket_us[active > 0 ? 3 : 0] = k_five;
    c.util_samples = 1;
    return c;
}

telemetry::Tick tick_at(TimeUs t0, std::vector<telemetry::CardTickRecord> cards) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = k_five;
    t.cards = std::move(cards);
    return t;
}

void record(store::Database& db, const std::vector<TimeUs>& starts,
            const std::vector<telemetry::CardTickRecord>& cards) {
    store::Writer w(db, store::RunInfo{"host", "560.35.05", "nvml", k_five, 10.0, starts.front()});
    for (std::size_t i = 0; i < starts.size(); ++i) {
        telemetry::Tick t = tick_at(starts[i], cards);
        t.seq = i;
        w.write(t);
    }
    w.finish(starts.back() + k_five);
}

BuildOptions window(TimeUs from, TimeUs to) {
    BuildOptions o;
    o.from = from;
    o.to = to;
    o.window_label = "test";
    return o;
}

TEST(ProvenanceReport, TwoRunsOnOneDatabaseAreCountedOnce) {
    // Two writers recorded the same two GPUs every 5 s, 2.5 s apart: run A at 0, 5, 10 s and run
    // B at 2.5, 7.5 s, all busy. 25 GPU-seconds recorded per GPU over [0, 15) s of wall time.
    testing::TempDb t;
    const std::vector<telemetry::CardTickRecord> cards{plain(0, k_five), plain(1, k_five)};
    record(t.db, {k_start, k_start + k_five, k_start + 2 * k_five}, cards);
    record(t.db, {k_start + k_five / 2, k_start + k_five + k_five / 2}, cards);
    const ReportModel m = build_report(t.db, window(k_start, k_start + 20 * k_us_per_second),
                                       TimeZone::load("UTC").value());
    const double wall_hours = 15.0 / 3600.0;
    EXPECT_NEAR(m.headline.active_hours, 2 * wall_hours, 1e-12);
    EXPECT_DOUBLE_EQ(m.headline.active, 1.0);
    for (const GpuRow& g : m.gpus) {
        const double recorded = g.shares.active_hours + g.shares.idle_held_hours +
                                g.shares.truly_idle_hours + g.shares.unmeasured_hours;
        EXPECT_LE(recorded, wall_hours + 1e-12) << g.uuid;
        EXPECT_NEAR(g.provenance.overlap_hours, 10.0 / 3600.0, 1e-12);
    }
    EXPECT_NEAR(m.provenance.overlap_hours, 20.0 / 3600.0, 1e-12);
    const std::string text = render_text(m, TextOptions{});
    EXPECT_NE(text.find("20s of card time was recorded more than once"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(render_json(m));
    EXPECT_NEAR(j["coverage"]["overlap_seconds"].get<double>(), 20.0, 1e-6);
}

TEST(ProvenanceReport, MigInstancesAreUnmeasuredCapacityPricedByTheirSlices) {
    // One idle plain A100 and two MIG 3g.40gb instances without any utilization reading, 12
    // ticks of 5 s: the plain card is the only measured GPU, so one GPU is equivalently unused.
    testing::TempDb t;
    std::vector<telemetry::CardTickRecord> cards{plain(0, 0)};
    for (int i = 0; i < 2; ++i) {
        telemetry::CardTickRecord mig;
        mig.device.uuid = "MIG-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-0123456789ab";
        mig.device.index = 1;
        mig.device.name = "NVIDIA A100-SXM4-80GB MIG 3g.40gb";
        mig.device.memory_total_mib = 40192;
        mig.device.parent_uuid = "GPU-00000001-aaaa-bbbb-cccc-0123456789ab";
        cards.push_back(mig);
    }
    std::vector<TimeUs> starts;
    for (int i = 0; i < 12; ++i) {
        starts.push_back(k_start + i * k_five);
    }
    record(t.db, starts, cards);
    const ReportModel m = build_report(t.db, window(k_start, k_start + 60 * k_us_per_second),
                                       TimeZone::load("UTC").value());
    EXPECT_EQ(m.waste.cards_in_window, 3U);
    EXPECT_DOUBLE_EQ(m.waste.measured_gpus, 1.0);
    EXPECT_DOUBLE_EQ(m.waste.truly_idle_equiv_gpus, 1.0);
    // Shares of all card time: 1/3 truly idle, 2/3 unmeasured, and they add up to 1.
    EXPECT_NEAR(m.headline.truly_idle, 1.0 / 3.0, 1e-12);
    EXPECT_NEAR(m.headline.unmeasured, 2.0 / 3.0, 1e-12);
    EXPECT_NEAR(m.provenance.no_reading_hours, 2 * 60.0 / 3600.0, 1e-12);
    // The 20 % rule cannot be decided: the MIG time could all be idle-held.
    EXPECT_FALSE(m.waste.verdict_certain);
    // A100 at the built-in $2.00 × 3/7 per hour for each instance.
    ASSERT_EQ(m.cost.gpus.size(), 3U);
    const auto expected_micros = std::llround(2.0 * audit::k_micros_per_unit * 3.0 / 7.0);
    int migs = 0;
    for (const GpuCostRow& row : m.cost.gpus) {
        if (row.model.find("MIG") != std::string::npos) {
            ++migs;
            EXPECT_EQ(row.micros_per_gpu_hour, expected_micros);
            EXPECT_DOUBLE_EQ(row.card_fraction, 3.0 / 7.0);
        } else {
            EXPECT_EQ(row.micros_per_gpu_hour, 2 * audit::k_micros_per_unit);
        }
    }
    EXPECT_EQ(migs, 2);
    const std::string text = render_text(m, TextOptions{});
    EXPECT_NE(text.find("~1.00 GPUs equivalently unused"), std::string::npos) << text;
    EXPECT_EQ(text.find("~3.00 GPUs"), std::string::npos) << text;
}

/// A model whose headline, provenance and waste come from `states`, as build_report makes them.
ReportModel model_of(const audit::StateTimes& states, DurationUs snapshot_us) {
    ReportModel m;
    m.samples = 1;
    m.headline = shares_of(states);
    audit::Provenance p;
    p.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::samples)] =
        states.total() - states.unmeasured - snapshot_us;
    p.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::snapshot)] = snapshot_us;
    p.util_unknown_us = states.unmeasured;
    m.provenance = provenance_of(states, p, 0);
    m.waste = audit::compute_waste({states}, snapshot_us);
    return m;
}

TEST(ProvenanceReport, HeadlineSharesAndUnmeasuredAddUpToOneHundred) {
    const audit::StateTimes st{3333, 1667, 4000, 1000};
    const ReportModel m = model_of(st, 0);
    EXPECT_DOUBLE_EQ(m.headline.active + m.headline.idle_held + m.headline.truly_idle +
                         m.headline.unmeasured,
                     1.0);
    const std::string text = render_text(m, TextOptions{});
    // 33.3 + 16.7 + 40.0 + 10.0 as printed.
    EXPECT_NE(text.find("active       █   33.3%"), std::string::npos) << text;
    EXPECT_NE(text.find("unmeasured   ?   10.0%"), std::string::npos) << text;
    EXPECT_NE(text.find("90.0% from driver sample buffers, 10.0% unmeasured"), std::string::npos)
        << text;
}

TEST(ProvenanceReport, VerdictSaysWhenUnmeasuredTimeCouldChangeIt) {
    // Idle-held 18 % with 5 % unmeasured: could be above the 20 % rule.
    const ReportModel m = model_of(audit::StateTimes{77, 18, 0, 5}, 0);
    const std::string text = render_text(m, TextOptions{});
    EXPECT_NE(text.find("Idle-held is 18.0% of recorded GPU time with 5.0% unmeasured: it could "
                        "be above the 20% rule (between 18.0% and 23.0%)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("within the 20% rule"), std::string::npos);
    // 10 % with 5 % unmeasured is within the rule whatever that time was.
    const std::string within = render_text(model_of({85, 10, 0, 5}, 0), TextOptions{});
    EXPECT_NE(within.find("Idle-held is 10.0% of observed GPU time (at most 15.0% with 5.0% "
                          "unmeasured), within the 20% rule"),
              std::string::npos)
        << within;
}

TEST(ProvenanceReport, SnapshotShareIsStatedWithItsErrorBound) {
    // 100 s, 10 s of it measured by snapshots, idle-held 25 %: 15 %–35 %, undecided.
    const ReportModel m = model_of(audit::StateTimes{75, 25, 0, 0}, 10);
    EXPECT_DOUBLE_EQ(m.provenance.snapshot_error_pp, 10.0);
    const std::string text = render_text(m, TextOptions{});
    EXPECT_NE(text.find("90.0% from driver sample buffers, 10.0% snapshots"), std::string::npos)
        << text;
    EXPECT_NE(text.find("snapshot shares can be off by up to ±10.0 pp"), std::string::npos) << text;
    EXPECT_NE(text.find("with 10.0% measured by snapshots: it could be within the 20% rule "
                        "(between 15.0% and 35.0%)"),
              std::string::npos)
        << text;
    const nlohmann::json j = nlohmann::json::parse(render_json(m));
    EXPECT_DOUBLE_EQ(j["provenance"]["snapshot_share"].get<double>(), 0.1);
    EXPECT_DOUBLE_EQ(j["provenance"]["samples_share"].get<double>(), 0.9);
    EXPECT_FALSE(j["policy_verdict"]["certain"].get<bool>());
}

} // namespace
} // namespace gua::report

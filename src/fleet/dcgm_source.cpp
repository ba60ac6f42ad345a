// SPDX-License-Identifier: Apache-2.0
// The fleet report from dcgm-exporter: each step of each GPU or MIG instance becomes an
// audit::CardTick (graphics-engine activity or device utilization, framebuffer used as the
// holder's memory, SM/tensor/DRAM activity as GPM's readings) fed to the same WindowAccumulator.
#include "audit/window.hpp"
#include "core/fatal.hpp"
#include "fleet/dcgm_units.hpp"
#include "report/build_cost.hpp"
#include "report/build_health.hpp"
#include "report/health_remedies.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::report {

namespace {

/// The fleet's sums over the GPUs that recorded anything.
struct DcgmSums {
    std::map<std::string, audit::StateTimes> by_host;
    std::vector<audit::StateTimes> card_states;
    std::vector<store::GpuRow> priced; // the cards as §7 and §8 read them, ids = acc's
    audit::Provenance provenance;
    DurationUs overlap_us = 0;
    DurationUs profiling_us = 0; ///< of the measured time: decided by DCGM profiling
};

/// m.gpus from the accumulated GPUs, and their sums.
DcgmSums add_dcgm_rows(ReportModel& m, const audit::WindowAccumulator& acc, const DcgmTicks& dt) {
    const std::vector<const DcgmUnit*>& index = dt.index;
    DcgmSums sums;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (i >= acc.gpus().size() || acc.gpus()[i].ticks == 0) {
            continue;
        }
        const audit::GpuTotals& t = acc.gpus()[i];
        GpuRow row = index[i]->row;
        row.shares = shares_of(t.states);
        row.buckets = bucket_shares(t.bucket_us);
        row.samples = t.ticks;
        row.provenance = dcgm_provenance(t.states, t.provenance, t.overlap_us, dt.profiling_us[i]);
        sums.by_host[row.host] += t.states;
        sums.card_states.push_back(t.states);
        sums.provenance += t.provenance;
        sums.overlap_us += t.overlap_us;
        sums.profiling_us += dt.profiling_us[i];
        sums.priced.push_back(store::GpuRow{static_cast<std::int64_t>(i), row.uuid, row.index,
                                            row.model, std::nullopt, index[i]->parent_uuid});
        m.gpus.push_back(row);
    }
    return sums;
}

/// §1–§3 and §5 of the fleet from the accumulator.
void fill_dcgm_states(ReportModel& m, const audit::WindowAccumulator& acc, const DcgmSums& sums,
                      DurationUs step_us) {
    const audit::StateTimes& st = acc.states();
    m.samples = acc.ticks();
    m.headline = shares_of(st);
    m.provenance = dcgm_provenance(st, sums.provenance, sums.overlap_us, sums.profiling_us);
    m.observed_card_hours = to_hours(st.active + st.idle_held + st.truly_idle);
    // The snapshot readings (device utilization) bound the verdict's error; profiling time is
    // an average over DCGM's sampling period.
    const DurationUs snapshot_us =
        sums.provenance.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::snapshot)];
    m.waste = audit::compute_waste(sums.card_states,
                                   std::max<DurationUs>(snapshot_us - sums.profiling_us, 0));
    m.buckets = bucket_shares(acc.bucket_us());
    const auto& b = acc.bucket_us();
    m.bucket_hours = to_hours(b[0] + b[1] + b[2] + b[3]);
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            m.heatmap[d][h] = heat_cell(acc.heatmap()[d][h]);
        }
    }
    m.notes.push_back(fmt::format(
        "source dcgm-exporter: states from DCGM's graphics-engine activity "
        "(DCGM_FI_PROF_GR_ENGINE_ACTIVE; MIG instances too) where exported, else device "
        "utilization, and framebuffer used, every {}s; per-user attribution needs gua's daemon "
        "(§4 is empty)",
        static_cast<double>(step_us) / 1e6));
    add_provenance_notes(m.provenance, m.notes);
}

/// Coverage and hosts; returns the wall time with data.
DurationUs fill_dcgm_coverage(ReportModel& m, const FleetRead& r,
                              const audit::WindowAccumulator& acc, const DcgmSums& sums) {
    const BuildOptions& o = r.options;
    const DurationUs step = coverage_step(o.from, o.to);
    const SeriesPresence presence = presence_of(
        r.prom.query_range(fmt::format("count by ({}) ({{__name__=~\"DCGM_FI_PROF_GR_ENGINE_ACTIVE|"
                                       "DCGM_FI_DEV_GPU_UTIL|DCGM_FI_DEV_FB_USED\"}})",
                                       r.fleet.host_label),
                           o.from, o.to, step),
        r.fleet.host_label, o.from, o.to, step);
    m.coverage.first = acc.first();
    m.coverage.last_end = acc.last_end();
    DurationUs gap_total = 0;
    for (const audit::Gap& g : acc.gaps()) {
        m.coverage.gaps.emplace_back(g.from, g.to);
        gap_total += g.to - g.from;
    }
    const DurationUs recorded =
        acc.first()
            ? std::max<DurationUs>(
                  std::min(*acc.last_end(), o.to) - std::max(*acc.first(), o.from) - gap_total, 0)
            : 0;
    m.coverage.covered_share = presence.covered_share;
    summarise_hosts(m, sums.by_host, presence, r.prom.url());
    return recorded;
}

/// §9 from what the card-ticks carry: the profiling fields as GPM's readings (busy but light,
/// tensor and DRAM activity); energy, clocks and memory are not read from dcgm-exporter. Each
/// card keeps its host and §7's price (`priced` is in §7's order and m.gpus's).
void fill_dcgm_health(ReportModel& m, const audit::WindowAccumulator& acc,
                      const std::vector<store::GpuRow>& priced, const BuildOptions& o) {
    std::vector<CardHealthInput> cards;
    for (std::size_t i = 0; i < priced.size() && i < m.gpus.size(); ++i) {
        const audit::GpuTotals& t = acc.gpus()[static_cast<std::size_t>(priced[i].id)];
        CardHealthInput c{priced[i].index, priced[i].uuid, priced[i].name, m.gpus[i].host,
                          t.states,        t.health,       std::nullopt};
        if (i < m.cost.gpus.size()) {
            c.micros_per_gpu_hour = m.cost.gpus[i].micros_per_gpu_hour;
        }
        cards.push_back(std::move(c));
    }
    HealthSection h = build_card_health(cards, o);
    h.remedies = health_remedies(h, m.cost.gpus, priced);
    m.health = std::move(h);
}

} // namespace

ReportModel build_dcgm_report(PrometheusClient& prom, const FleetOptions& fleet,
                              const BuildOptions& o, const TimeZone& tz) {
    ReportModel m = start_fleet_model(prom, o, tz);
    const FleetRead r{prom, fleet, o, tz, PromLimits{}};
    const DcgmUnits units = read_dcgm_units(r);
    const DcgmTicks dt = dcgm_ticks(units, r);
    audit::WindowAccumulator acc(o.thresholds, 0, [&tz](TimeUs t) { return tz.weekday_hour(t); });
    for (const audit::CardTick& t : dt.ticks) {
        acc.add(t);
    }
    const DcgmSums sums = add_dcgm_rows(m, acc, dt);
    fill_dcgm_states(m, acc, sums, fleet.step_us);
    const DurationUs recorded = fill_dcgm_coverage(m, r, acc, sums);
    // The gauges give card-ticks like a database's: §7 and §8 as in `gua report --db`.
    const std::vector<store::IdentityRow> no_identities;
    const std::vector<audit::AllocationRow> no_allocations;
    build_cost_and_advice(acc, WindowTables{sums.priced, no_identities, no_allocations}, o,
                          recorded, m);
    fill_dcgm_health(m, acc, sums.priced, o);
    return m;
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The fleet report from dcgm-exporter: each step of each GPU becomes an audit::CardTick (device
// utilization, framebuffer used as the holder's memory) fed to the same WindowAccumulator.
#include "audit/window.hpp"
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"
#include "report/build_cost.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::report {

namespace {

/// The most a dcgm-exporter gauge can read: utilization in percent (a little over 100 from
/// rounding is kept), framebuffer used in MiB (16 TiB: beyond any card).
constexpr double k_max_util_pct = 100.5;
constexpr double k_max_fb_mib = 16.0 * 1024 * 1024;

/// A GPU of the fleet as dcgm-exporter labels it.
struct DcgmGpu {
    GpuRow row;
    std::map<TimeUs, double> util_pct;
    std::map<TimeUs, double> fb_used_mib;
};

using DcgmGpus = std::map<std::pair<std::string, std::string>, DcgmGpu>;

/// Reads one gauge into the GPUs keyed by (host, UUID); refuses a reading above `max` (a
/// utilization above 100 %, a framebuffer larger than any card's) naming its series.
void read_gauge(const FleetRead& r, const char* metric, double max, DcgmGpus& gpus,
                std::map<TimeUs, double> DcgmGpu::*field) {
    PrometheusClient& prom = r.prom;
    const FleetOptions& fleet = r.fleet;
    const BuildOptions& o = r.options;
    const std::string& h = fleet.host_label;
    const std::string expr = fmt::format("max by ({}, gpu, UUID, modelName) ({})", h, metric);
    for (const PromSeries& s : prom.query_range(expr, o.from, o.to, fleet.step_us)) {
        for (const auto& [t, v] : s.values) {
            if (v > max) {
                PromLabels labels = s.labels;
                labels["__name__"] = metric;
                throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: "
                                        "{:.6g} at {}, above the most it can read ({:g})",
                                        prom.url(), describe_series(labels), v, format_iso8601(t),
                                        max));
            }
        }
        DcgmGpu& g = gpus[{prom_label(s.labels, h), prom_label(s.labels, "UUID")}];
        g.row.host = prom_label(s.labels, h);
        g.row.uuid = prom_label(s.labels, "UUID");
        g.row.short_uuid = short_uuid(g.row.uuid);
        g.row.model = prom_label(s.labels, "modelName");
        g.row.index = gpu_index(s.labels, prom.url());
        for (const auto& [t, v] : s.values) {
            if (t >= o.from && t <= o.to) { // a server's answer outside the window is ignored
                (g.*field)[t] = v;
            }
        }
    }
}

/// The card-tick of one step: active when util ≥ threshold; the framebuffer in use stands for
/// the holders' memory, so the audit calls the rest idle-held above the held threshold.
audit::CardTick tick_of(std::uint32_t gpu, TimeUs t, DurationUs step, double util,
                        std::optional<double> fb_mib, const audit::Thresholds& thresholds) {
    audit::CardTick tick;
    tick.gpu = gpu;
    tick.t0 = t;
    tick.duration_us = step;
    tick.util_pct = util;
    tick.active_us = util >= thresholds.active_util_pct ? step : 0;
    tick.bucket_us[static_cast<std::size_t>(audit::bucket_of(util))] = step;
    // One gauge reading per step stands for the whole step: a snapshot, with its error bound.
    tick.util_source = telemetry::UtilSource::snapshot;
    if (fb_mib) {
        tick.processes.push_back(audit::ProcTick{0, telemetry::ProcessType::compute,
                                                 bounded_round(*fb_mib, 1e9), std::nullopt,
                                                 std::nullopt, std::nullopt});
    } else if (*tick.active_us == 0) {
        tick.idle_unknown_us = step; // no framebuffer reading: held or not is unknown
    }
    return tick;
}

/// The card-ticks of every GPU, in time order, ids = the GPU's place in `index`.
std::vector<audit::CardTick> dcgm_ticks(const DcgmGpus& gpus, std::vector<const DcgmGpu*>& index,
                                        const FleetRead& r) {
    std::vector<audit::CardTick> ticks;
    for (const auto& [key, g] : gpus) {
        const auto id = static_cast<std::uint32_t>(index.size());
        index.push_back(&g);
        for (const auto& [t, util] : g.util_pct) {
            const auto fb = g.fb_used_mib.find(t);
            ticks.push_back(tick_of(id, t, r.fleet.step_us, util,
                                    fb != g.fb_used_mib.end() ? std::optional<double>(fb->second)
                                                              : std::nullopt,
                                    r.options.thresholds));
        }
    }
    std::sort(ticks.begin(), ticks.end(), [](const audit::CardTick& a, const audit::CardTick& b) {
        return a.t0 != b.t0 ? a.t0 < b.t0 : a.gpu < b.gpu;
    });
    if (ticks.empty()) {
        throw Fatal(fmt::format("no dcgm-exporter series at Prometheus {} between {} and {}: "
                                "looked for DCGM_FI_DEV_GPU_UTIL (and DCGM_FI_DEV_FB_USED) by "
                                "`{}`, gpu, UUID and modelName",
                                r.prom.url(), format_iso8601(r.options.from),
                                format_iso8601(r.options.to), r.fleet.host_label));
    }
    return ticks;
}

/// The fleet's sums over the GPUs that recorded anything.
struct DcgmSums {
    std::map<std::string, audit::StateTimes> by_host;
    std::vector<audit::StateTimes> card_states;
    std::vector<store::GpuRow> priced; // the cards as §7 and §8 read them, ids = acc's
    audit::Provenance provenance;
    DurationUs overlap_us = 0;
};

/// m.gpus from the accumulated GPUs, and their sums.
DcgmSums add_dcgm_rows(ReportModel& m, const audit::WindowAccumulator& acc,
                       const std::vector<const DcgmGpu*>& index) {
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
        row.provenance = provenance_of(t.states, t.provenance, t.overlap_us);
        sums.by_host[row.host] += t.states;
        sums.card_states.push_back(t.states);
        sums.provenance += t.provenance;
        sums.overlap_us += t.overlap_us;
        sums.priced.push_back(store::GpuRow{static_cast<std::int64_t>(i), row.uuid, row.index,
                                            row.model, std::nullopt, ""});
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
    m.provenance = provenance_of(st, sums.provenance, sums.overlap_us);
    m.observed_card_hours = to_hours(st.active + st.idle_held + st.truly_idle);
    m.waste = audit::compute_waste(
        sums.card_states,
        sums.provenance.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::snapshot)]);
    m.buckets = bucket_shares(acc.bucket_us());
    const auto& b = acc.bucket_us();
    m.bucket_hours = to_hours(b[0] + b[1] + b[2] + b[3]);
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            m.heatmap[d][h] = heat_cell(acc.heatmap()[d][h]);
        }
    }
    m.notes.push_back("source dcgm-exporter: states from device utilization and framebuffer used "
                      "every " +
                      fmt::format("{}s", static_cast<double>(step_us) / 1e6) +
                      "; per-user attribution needs gua's daemon (§4 is empty)");
    add_provenance_notes(m.provenance, m.notes);
}

/// Coverage and hosts; returns the wall time with data.
DurationUs fill_dcgm_coverage(ReportModel& m, const FleetRead& r,
                              const audit::WindowAccumulator& acc, const DcgmSums& sums) {
    const BuildOptions& o = r.options;
    const DurationUs step = coverage_step(o.from, o.to);
    const SeriesPresence presence = presence_of(
        r.prom.query_range(fmt::format("count by ({}) (DCGM_FI_DEV_GPU_UTIL)", r.fleet.host_label),
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

} // namespace

ReportModel build_dcgm_report(PrometheusClient& prom, const FleetOptions& fleet,
                              const BuildOptions& o, const TimeZone& tz) {
    ReportModel m = start_fleet_model(prom, o, tz);
    const FleetRead r{prom, fleet, o, tz, PromLimits{}};
    DcgmGpus gpus;
    read_gauge(r, "DCGM_FI_DEV_GPU_UTIL", k_max_util_pct, gpus, &DcgmGpu::util_pct);
    read_gauge(r, "DCGM_FI_DEV_FB_USED", k_max_fb_mib, gpus, &DcgmGpu::fb_used_mib);
    std::vector<const DcgmGpu*> index;
    const std::vector<audit::CardTick> ticks = dcgm_ticks(gpus, index, r);
    audit::WindowAccumulator acc(o.thresholds, 0, [&tz](TimeUs t) { return tz.weekday_hour(t); });
    for (const audit::CardTick& t : ticks) {
        acc.add(t);
    }
    const DcgmSums sums = add_dcgm_rows(m, acc, index);
    fill_dcgm_states(m, acc, sums, fleet.step_us);
    const DurationUs recorded = fill_dcgm_coverage(m, r, acc, sums);
    // The gauges give card-ticks like a database's: §7 and §8 as in `gua report --db`.
    const std::vector<store::IdentityRow> no_identities;
    const std::vector<audit::AllocationRow> no_allocations;
    build_cost_and_advice(acc, WindowTables{sums.priced, no_identities, no_allocations}, o,
                          recorded, m);
    return m;
}

} // namespace gua::report

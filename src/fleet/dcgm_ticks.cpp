// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's units as card-ticks: each step of a whole GPU or MIG instance, its state
// decided by DCGM's graphics-engine activity (else device utilization), and the provenance that
// says which one decided.
#include "audit/classify.hpp"
#include "core/fatal.hpp"
#include "fleet/dcgm_units.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gua::report {

namespace {

/// A ratio 0–1 as the card fields' % × 100 (0–10000), as GPM's readings are recorded.
std::optional<std::int64_t> ratio_cpct(const std::map<TimeUs, double>& series, TimeUs t) {
    const auto it = series.find(t);
    if (it == series.end()) {
        return std::nullopt;
    }
    return bounded_round(it->second * 10000.0, 10000.0);
}

/// The reading of `series` at `t`, if any.
std::optional<double> reading_at(const std::map<TimeUs, double>& series, TimeUs t) {
    const auto it = series.find(t);
    return it != series.end() ? std::optional<double>(it->second) : std::nullopt;
}

/// Which gauge decided a step's utilization.
enum class DcgmUtil { none, profiling, device };

/// The utilization of a unit at a step and which gauge gave it: DCGM's graphics-engine activity
/// first (the only reading a MIG instance has, and an average over DCGM's sampling period),
/// else device utilization (one reading of the driver's last sample period); none: no reading.
std::pair<std::optional<double>, DcgmUtil> util_at(const DcgmUnit& u, TimeUs t) {
    if (const auto gr = reading_at(u.gr_active, t)) {
        return {*gr * 100.0, DcgmUtil::profiling};
    }
    if (const auto util = reading_at(u.gpu_util, t)) {
        return {*util, DcgmUtil::device};
    }
    return {std::nullopt, DcgmUtil::none};
}

/// The card-tick of one step of a unit: active when util ≥ threshold; the framebuffer in use
/// stands for the holders' memory, so the audit calls the rest idle-held above the held
/// threshold. Without a utilization reading the step is unmeasured, never idle.
audit::CardTick tick_of(std::uint32_t gpu, const DcgmUnit& u, TimeUs t, DurationUs step,
                        const audit::Thresholds& thresholds, DcgmUtil& decided_by) {
    audit::CardTick tick;
    tick.gpu = gpu;
    tick.t0 = t;
    tick.duration_us = step;
    tick.readings.sm_active_cpct = ratio_cpct(u.sm_active, t);
    tick.readings.tensor_active_cpct = ratio_cpct(u.tensor_active, t);
    tick.readings.dram_bw_cpct = ratio_cpct(u.dram_active, t);
    const auto [util, source] = util_at(u, t);
    decided_by = source;
    if (!util) {
        return tick; // no utilization reading: unmeasured (no reading at all)
    }
    tick.util_pct = *util;
    tick.active_us = *util >= thresholds.active_util_pct ? step : 0;
    tick.bucket_us[static_cast<std::size_t>(audit::bucket_of(*util))] = step;
    // One gauge reading per step stands for the whole step: counted as a snapshot in the audit
    // (its error bound); the report names the profiling part apart (dcgm_provenance).
    tick.util_source = telemetry::UtilSource::snapshot;
    if (const auto fb_mib = reading_at(u.fb_used_mib, t)) {
        tick.processes.push_back(audit::ProcTick{0, telemetry::ProcessType::compute,
                                                 bounded_round(*fb_mib, 1e9), std::nullopt,
                                                 std::nullopt, std::nullopt});
    } else if (*tick.active_us == 0) {
        tick.idle_unknown_us = step; // no framebuffer reading: held or not is unknown
    }
    return tick;
}

/// Every step at which `u` has any reading.
std::set<TimeUs> steps_of(const DcgmUnit& u) {
    std::set<TimeUs> steps;
    for (const auto* series : {&u.gr_active, &u.gpu_util, &u.fb_used_mib, &u.sm_active,
                               &u.tensor_active, &u.dram_active}) {
        for (const auto& [t, v] : *series) {
            steps.insert(t);
        }
    }
    return steps;
}

/// The steps at which each card (host, UUID) had a MIG instance reporting: a card in MIG mode is
/// its instances (as in a database), so its own series are left out there.
std::map<std::pair<std::string, std::string>, std::set<TimeUs>> mig_steps(const DcgmUnits& units) {
    std::map<std::pair<std::string, std::string>, std::set<TimeUs>> out;
    for (const auto& [key, u] : units) {
        if (key.gpu_instance >= 0) {
            out[{key.host, key.uuid}].merge(steps_of(u));
        }
    }
    return out;
}

} // namespace

DcgmTicks dcgm_ticks(const DcgmUnits& units, const FleetRead& r) {
    DcgmTicks out;
    std::vector<audit::CardTick>& ticks = out.ticks;
    const auto in_mig_mode = mig_steps(units);
    for (const auto& [key, u] : units) {
        const auto id = static_cast<std::uint32_t>(out.index.size());
        out.index.push_back(&u);
        out.profiling_us.push_back(0);
        const auto mig =
            key.gpu_instance < 0 ? in_mig_mode.find({key.host, key.uuid}) : in_mig_mode.end();
        for (const TimeUs t : steps_of(u)) {
            if (mig != in_mig_mode.end() && mig->second.contains(t)) {
                continue;
            }
            DcgmUtil decided_by = DcgmUtil::none;
            ticks.push_back(tick_of(id, u, t, r.fleet.step_us, r.options.thresholds, decided_by));
            if (decided_by == DcgmUtil::profiling) {
                const audit::StateTimes st = audit::classify(ticks.back(), r.options.thresholds);
                out.profiling_us.back() += st.total() - st.unmeasured;
            }
        }
    }
    std::sort(ticks.begin(), ticks.end(), [](const audit::CardTick& a, const audit::CardTick& b) {
        return a.t0 != b.t0 ? a.t0 < b.t0 : a.gpu < b.gpu;
    });
    if (ticks.empty()) {
        throw Fatal(fmt::format("no dcgm-exporter series at Prometheus {} between {} and {}: "
                                "looked for DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL "
                                "and DCGM_FI_DEV_FB_USED by `{}`, gpu, UUID and modelName",
                                r.prom.url(), format_iso8601(r.options.from),
                                format_iso8601(r.options.to), r.fleet.host_label));
    }
    return out;
}

ProvenanceShares dcgm_provenance(const audit::StateTimes& states, audit::Provenance provenance,
                                 DurationUs overlap_us, DurationUs profiling_us) {
    DurationUs& snapshot =
        provenance.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::snapshot)];
    const DurationUs profiling = std::clamp<DurationUs>(profiling_us, 0, snapshot);
    snapshot -= profiling;
    // What provenance_of cannot place (the profiling time) it calls source_unknown: named here.
    ProvenanceShares s = provenance_of(states, provenance, overlap_us);
    const auto total = static_cast<double>(states.total());
    s.dcgm_profiling =
        std::min(total > 0 ? static_cast<double>(profiling) / total : 0.0, s.source_unknown);
    s.source_unknown -= s.dcgm_profiling;
    s.dcgm_profiling_hours = std::min(to_hours(profiling), s.source_unknown_hours);
    s.source_unknown_hours -= s.dcgm_profiling_hours;
    return s;
}

} // namespace gua::report

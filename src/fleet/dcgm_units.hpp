// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's gauges grouped into units of card time: a whole GPU, or one MIG instance of
// it (series labelled GPU_I_ID / GPU_I_PROFILE), each with its readings per query step.
#pragma once

#include "fleet/fleet.hpp"

#include <compare>
#include <map>
#include <string>
#include <vector>

namespace gua::report {

/// A unit as dcgm-exporter labels it: host, the card's UUID (a MIG instance's series carry their
/// card's UUID) and the GPU-instance id (-1 for the whole card).
struct DcgmKey {
    std::string host;
    std::string uuid;
    int gpu_instance = -1;
    auto operator<=>(const DcgmKey&) const = default;
};

/// One unit's readings by step time, as dcgm-exporter exports them.
struct DcgmUnit {
    GpuRow row;              ///< a MIG instance: its card's index, "<model> MIG <profile>"
    std::string parent_uuid; ///< a MIG instance: its card's UUID; empty for a whole card
    std::map<TimeUs, double> gr_active;     ///< DCGM_FI_PROF_GR_ENGINE_ACTIVE (ratio 0–1)
    std::map<TimeUs, double> gpu_util;      ///< DCGM_FI_DEV_GPU_UTIL (%)
    std::map<TimeUs, double> fb_used_mib;   ///< DCGM_FI_DEV_FB_USED (MiB)
    std::map<TimeUs, double> sm_active;     ///< DCGM_FI_PROF_SM_ACTIVE (ratio)
    std::map<TimeUs, double> tensor_active; ///< DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (ratio)
    std::map<TimeUs, double> dram_active;   ///< DCGM_FI_PROF_DRAM_ACTIVE (ratio)
};

using DcgmUnits = std::map<DcgmKey, DcgmUnit>;

/// Reads every gauge the dcgm report uses over [options.from, options.to) at fleet.step_us,
/// each step's reading being the last sample within two steps before it (an older one stands
/// for nothing: the step has no reading). Refuses a reading beyond what its gauge can read, and
/// a GPU_I_ID that is not a whole number, with a one-line Fatal naming the series.
DcgmUnits read_dcgm_units(const FleetRead& r);

/// The card-ticks of every unit, in time order (a card in MIG mode is its instances: its own
/// series are left out at the steps its instances report), with ids = the unit's place in
/// `index`, and per unit the measured time DCGM profiling decided. Throws Fatal when there is none.
struct DcgmTicks {
    std::vector<audit::CardTick> ticks;
    std::vector<const DcgmUnit*> index;
    std::vector<DurationUs> profiling_us;
};
DcgmTicks dcgm_ticks(const DcgmUnits& units, const FleetRead& r);

/// provenance_of() for the dcgm report, whose card-ticks all count as snapshots in the audit:
/// `profiling_us` of the snapshot time (decided by DCGM_FI_PROF_GR_ENGINE_ACTIVE) becomes the
/// dcgm_profiling share, the rest (DCGM_FI_DEV_GPU_UTIL) stays snapshot.
ProvenanceShares dcgm_provenance(const audit::StateTimes& states, audit::Provenance provenance,
                                 DurationUs overlap_us, DurationUs profiling_us);

/// The query that reads `metric` per unit at a step of `step_us`.
std::string dcgm_unit_query(const std::string& metric, const std::string& host_label,
                            DurationUs step_us);

} // namespace gua::report

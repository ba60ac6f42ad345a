// SPDX-License-Identifier: Apache-2.0
// Reading dcgm-exporter's gauges from Prometheus into units of card time: whole GPUs and MIG
// instances (GPU_I_ID), each gauge validated against what it can read.
#include "core/fatal.hpp"
#include "fleet/dcgm_units.hpp"
#include "prometheus/answer.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace gua::report {

namespace {

/// The most a gauge can read: a ratio (a little over 1 from rounding is kept), utilization in
/// percent, framebuffer used in MiB (16 TiB: beyond any card).
constexpr double k_max_ratio = 1.005;
constexpr double k_max_util_pct = 100.5;
constexpr double k_max_fb_mib = 16.0 * 1024 * 1024;

/// A gauge the report reads and where its readings go.
struct DcgmGauge {
    const char* metric;
    double max;
    std::map<TimeUs, double> DcgmUnit::*field;
};

constexpr std::array<DcgmGauge, 6> k_dcgm_gauges{{
    {"DCGM_FI_DEV_GPU_UTIL", k_max_util_pct, &DcgmUnit::gpu_util},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", k_max_ratio, &DcgmUnit::gr_active},
    {"DCGM_FI_DEV_FB_USED", k_max_fb_mib, &DcgmUnit::fb_used_mib},
    {"DCGM_FI_PROF_SM_ACTIVE", k_max_ratio, &DcgmUnit::sm_active},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", k_max_ratio, &DcgmUnit::tensor_active},
    {"DCGM_FI_PROF_DRAM_ACTIVE", k_max_ratio, &DcgmUnit::dram_active},
}};

/// The GPU-instance id of a series: -1 without a GPU_I_ID label, else a whole number of at most
/// six digits (NVML's instance ids are small). Throws Fatal for anything else.
int gpu_instance_of(const PromLabels& labels, const std::string& server) {
    const auto it = labels.find("GPU_I_ID");
    if (it == labels.end() || it->second.empty()) {
        return -1;
    }
    const std::string& text = it->second;
    int id = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
    const bool digits = text.size() <= 6 && std::all_of(text.begin(), text.end(), [](char c) {
                            return c >= '0' && c <= '9';
                        });
    if (!digits || error != std::errc() || end != text.data() + text.size()) {
        throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: its "
                                "GPU_I_ID label \"{}\" is not a GPU-instance id (a whole number)",
                                server, describe_series(labels), printable(text, 40)));
    }
    return id;
}

/// Throws Fatal when a value of `s` is above `gauge.max`.
void check_range(const PromSeries& s, const DcgmGauge& gauge, const std::string& server) {
    for (const auto& [t, v] : s.values) {
        if (v > gauge.max) {
            PromLabels labels = s.labels;
            labels["__name__"] = gauge.metric;
            throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: "
                                    "{:.6g} at {}, above the most it can read ({:g})",
                                    server, describe_series(labels), v, format_iso8601(t),
                                    gauge.max));
        }
    }
}

/// The unit a series belongs to, its row filled from the series' labels.
DcgmUnit& unit_of(DcgmUnits& units, const PromLabels& labels, const FleetRead& r) {
    const std::string server = r.prom.url();
    const std::string host = prom_label(labels, r.fleet.host_label);
    const std::string uuid = prom_label(labels, "UUID");
    const int instance = gpu_instance_of(labels, server);
    DcgmUnit& u = units[DcgmKey{host, uuid, instance}];
    u.row.host = host;
    u.row.index = gpu_index(labels, server);
    u.row.model = prom_label(labels, "modelName");
    if (instance < 0) {
        u.row.uuid = uuid;
        u.row.short_uuid = short_uuid(uuid);
        return u;
    }
    // dcgm-exporter names an instance by its card's UUID and its GPU-instance id; the model
    // follows NVML's naming of an instance ("<card model> MIG <profile>"), which pricing reads.
    const std::string profile = prom_label(labels, "GPU_I_PROFILE");
    u.parent_uuid = uuid;
    u.row.uuid = fmt::format("{}/gi{}", uuid, instance);
    u.row.short_uuid = fmt::format("{}/gi{}", short_uuid(uuid), instance);
    u.row.model = profile.empty() ? u.row.model + " MIG" : u.row.model + " MIG " + profile;
    return u;
}

} // namespace

std::string dcgm_unit_query(const std::string& metric, const std::string& host_label,
                            DurationUs step_us) {
    // last_over_time over two steps less a millisecond: a sample stands for its own step and at
    // most the next (a late scrape), so a gauge that stopped (profiling paused, an exporter
    // without it) leaves its steps without a reading instead of repeating its last value for
    // Prometheus's five-minute lookback. Less a millisecond: Prometheus before 3.0 includes a
    // sample exactly at the range's start.
    const DurationUs lookback_ms = std::max<DurationUs>(2 * step_us / k_us_per_ms - 1, 1);
    return fmt::format("max by ({}, gpu, UUID, modelName, GPU_I_ID, GPU_I_PROFILE) "
                       "(last_over_time({}[{}ms]))",
                       host_label, metric, lookback_ms);
}

DcgmUnits read_dcgm_units(const FleetRead& r) {
    DcgmUnits units;
    const BuildOptions& o = r.options;
    for (const DcgmGauge& gauge : k_dcgm_gauges) {
        const std::string expr = dcgm_unit_query(gauge.metric, r.fleet.host_label, r.fleet.step_us);
        for (const PromSeries& s : r.prom.query_range(expr, o.from, o.to, r.fleet.step_us)) {
            check_range(s, gauge, r.prom.url());
            DcgmUnit& u = unit_of(units, s.labels, r);
            for (const auto& [t, v] : s.values) {
                // A server's answer outside the window is ignored; a reading at the window's
                // end stands for the time after it.
                if (t >= o.from && t < o.to) {
                    (u.*gauge.field)[t] = v;
                }
            }
        }
    }
    return units;
}

} // namespace gua::report

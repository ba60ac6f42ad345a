// SPDX-License-Identifier: Apache-2.0
// The JSON report: every number of the text report, with a schema_version (docs/report-json.md).
#include "core/time.hpp"
#include "report/json_sections.hpp"
#include "report/render.hpp"

#include <nlohmann/json.hpp>

namespace gua::report {

namespace {

using nlohmann::json;

json opt_time(const std::optional<TimeUs>& t) {
    return t ? json(format_iso8601(*t)) : json();
}

/// State shares; the allocated-unused keys only in reports with allocations (`alloc`), so that
/// a host without an allocation source keeps its report byte for byte.
json shares(const StateShares& s, bool alloc) {
    json j{{"active", s.active},
           {"idle_held", s.idle_held},
           {"truly_idle", s.truly_idle},
           {"unmeasured", s.unmeasured},
           {"active_gpu_hours", s.active_hours},
           {"idle_held_gpu_hours", s.idle_held_hours},
           {"truly_idle_gpu_hours", s.truly_idle_hours},
           {"unmeasured_gpu_hours", s.unmeasured_hours}};
    if (alloc) {
        j["allocated_unused"] = s.allocated_unused;
        j["allocated_unused_gpu_hours"] = s.allocated_unused_hours;
    }
    if (s.lost_to_faults_hours > 0) { // only where a fault stranded a held card
        j["lost_to_faults"] = s.lost_to_faults;
        j["lost_to_faults_gpu_hours"] = s.lost_to_faults_hours;
    }
    return j;
}

json provenance(const ProvenanceShares& p) {
    json j{{"card_gpu_hours", p.card_hours},
           {"samples_share", p.samples},
           {"partial_share", p.partial},
           {"snapshot_share", p.snapshot},
           {"source_unknown_share", p.source_unknown},
           {"unmeasured_share", p.unmeasured},
           {"samples_gpu_hours", p.samples_hours},
           {"partial_gpu_hours", p.partial_hours},
           {"snapshot_gpu_hours", p.snapshot_hours},
           {"source_unknown_gpu_hours", p.source_unknown_hours},
           {"unmeasured_gpu_hours", p.unmeasured_hours},
           {"utilization_unknown_gpu_hours", p.utilization_unknown_hours},
           {"no_reading_gpu_hours", p.no_reading_hours},
           {"holders_unknown_gpu_hours", p.holders_unknown_hours},
           {"reason_unknown_gpu_hours", p.reason_unknown_hours},
           {"snapshot_error_pp", p.snapshot_error_pp},
           {"overlap_gpu_hours", p.overlap_hours}};
    if (p.allocation_unknown_hours > 0) { // only where an allocation source failed
        j["allocation_unknown_gpu_hours"] = p.allocation_unknown_hours;
    }
    if (p.dcgm_profiling_hours > 0) { // only in fleet reports from dcgm-exporter
        j["dcgm_profiling_share"] = p.dcgm_profiling;
        j["dcgm_profiling_gpu_hours"] = p.dcgm_profiling_hours;
    }
    return j;
}

json buckets(const std::array<double, 4>& b) {
    return json{
        {"idle", b[0]}, {"underutilized", b[1]}, {"productive", b[2]}, {"compute_bound", b[3]}};
}

json waste_json(const ReportModel& m, bool alloc) {
    const audit::Waste& w = m.waste;
    json out = {{"idle_held_gpu_hours", w.idle_held_gpu_hours},
                {"truly_idle_gpu_hours", w.truly_idle_gpu_hours},
                {"idle_held_share", w.idle_held_share},
                {"truly_idle_share", w.truly_idle_share},
                {"idle_held_equiv_gpus", w.idle_held_equiv_gpus},
                {"truly_idle_equiv_gpus", w.truly_idle_equiv_gpus},
                {"gpus_in_window", w.cards_in_window},
                {"measured_gpus", w.measured_gpus},
                {"observed_gpu_hours", m.observed_card_hours}};
    if (alloc) {
        out["allocated_unused_gpu_hours"] = w.allocated_unused_gpu_hours;
        out["allocated_unused_share"] = w.allocated_unused_share;
        out["allocated_unused_equiv_gpus"] = w.allocated_unused_equiv_gpus;
    }
    if (w.lost_to_faults_gpu_hours > 0) { // only where a fault stranded a held card
        out["lost_to_faults_gpu_hours"] = w.lost_to_faults_gpu_hours;
    }
    return out;
}

json verdict_json(const audit::Waste& w, bool alloc) {
    json out = {{"idle_held_share", w.idle_held_share},
                {"limit", audit::k_idle_held_policy_share},
                {"allocation_policy_problem", w.policy_problem},
                {"idle_held_share_low", w.idle_held_share_low},
                {"idle_held_share_high", w.idle_held_share_high},
                {"certain", w.verdict_certain}};
    if (alloc) {
        out["judged"] = "blocked";
        out["blocked_share"] = w.blocked_share;
        out["allocated_unused_share"] = w.allocated_unused_share;
        out["blocked_share_low"] = w.blocked_share_low;
        out["blocked_share_high"] = w.blocked_share_high;
    }
    return out;
}

json gpus_json(const ReportModel& m, bool alloc) {
    json gpus = json::array();
    for (const GpuRow& g : m.gpus) {
        gpus.push_back({{"index", g.index},
                        {"uuid", g.uuid},
                        {"model", g.model},
                        {"samples", g.samples},
                        {"states", shares(g.shares, alloc)},
                        {"provenance", provenance(g.provenance)},
                        {"efficiency", buckets(g.buckets)}});
        if (!g.host.empty()) {
            gpus.back()["host"] = g.host;
        }
    }
    return gpus;
}

json identities_json(const ReportModel& m) {
    json ids = json::array();
    for (const IdentityRow& r : m.identities) {
        ids.push_back({{"name", r.name},
                       {"gpu_hours", r.gpu_hours},
                       {"active_gpu_hours", r.active_hours},
                       {"idle_held_gpu_hours", r.idle_held_hours},
                       {"idle_held_share", r.idle_held_share},
                       {"idle_held_gib_hours", r.idle_held_gib_hours},
                       {"samples", r.samples}});
    }
    return {{"top", ids}, {"total", m.identities_total}};
}

json heatmap_json(const ReportModel& m, bool alloc) {
    json cells = json::array();
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            const HeatCell& c = m.heatmap[d][h];
            if (c.has_data) {
                cells.push_back({{"weekday", d},
                                 {"hour", h},
                                 {"active", c.active},
                                 {"idle_held", c.idle_held},
                                 {"truly_idle", c.truly_idle},
                                 {"gpu_hours", c.card_hours}});
                if (alloc) {
                    cells.back()["allocated_unused"] = c.allocated_unused;
                }
            }
        }
    }
    return {{"time_zone", m.time_zone}, {"cells", cells}};
}

json coverage_json(const ReportModel& m) {
    json gaps = json::array();
    for (const auto& [from, to] : m.coverage.gaps) {
        gaps.push_back({{"from", format_iso8601(from)}, {"to", format_iso8601(to)}});
    }
    return {{"first_sample", opt_time(m.coverage.first)},
            {"last_sample_end", opt_time(m.coverage.last_end)},
            {"recorded_share", m.coverage.covered_share},
            {"gaps", gaps},
            {"overlap_seconds", m.provenance.overlap_hours * 3600.0}};
}

} // namespace

std::string render_json(const ReportModel& m) {
    const bool alloc = m.allocation.has_value();
    json j;
    j["schema_version"] = m.schema_version;
    j["gua_version"] = m.gua_version;
    j["host"] = m.host;
    j["driver_version"] = m.driver_version;
    j["demo_data"] = m.demo_data;
    j["window"] = {{"from", format_iso8601(m.window_from)},
                   {"to", format_iso8601(m.window_to)},
                   {"label", m.window_label},
                   {"time_zone", m.time_zone},
                   {"filters", m.filters}};
    j["notes"] = m.notes;
    j["thresholds"] = {{"active_util_pct", m.active_threshold_pct},
                       {"held_mib", m.held_threshold_mib}};
    j["samples"] = m.samples;
    j["headline"] = shares(m.headline, alloc);
    j["provenance"] = provenance(m.provenance);
    j["waste"] = waste_json(m, alloc);
    j["policy_verdict"] = verdict_json(m.waste, alloc);
    j["gpus"] = gpus_json(m, alloc);
    for (const HostRow& h : m.hosts) {
        j["hosts"].push_back({{"host", h.host},
                              {"gpus", h.gpus},
                              {"samples", h.samples},
                              {"recorded_share", h.covered_share},
                              {"states", shares(h.shares, alloc)}});
    }
    j["identities"] = identities_json(m);
    if (m.jobs) {
        j["jobs"] = jobs_json(*m.jobs, m.jobs_total);
    }
    if (alloc) {
        j["allocations"] = allocations_json(*m.allocation);
    }
    j["heatmap"] = heatmap_json(m, alloc);
    j["efficiency"] = buckets(m.buckets);
    j["efficiency"]["measured_gpu_hours"] = m.bucket_hours;
    j["cost"] = cost_json(m);
    j["recommendations"] = recommendations_json(m);
    j["health"] = health_json(m);
    j["coverage"] = coverage_json(m);
    if (m.policy) {
        j["policy"] = policy_json(*m.policy);
    }
    // Names are bytes other people chose: invalid UTF-8 becomes U+FFFD, never an exception.
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace gua::report

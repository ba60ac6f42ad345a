// SPDX-License-Identifier: Apache-2.0
// §9's interconnect and bus findings: DCGM's health-watch limits applied to a card's NVLink and
// PCIe totals, each finding with its rate or share and when it was seen.
#include "audit/health_findings.hpp"

#include <fmt/format.h>

#include <string>

namespace gua::audit {

namespace {

std::string seen_of(const SeenSpan& s) {
    return s.first_us == 0 ? std::string()
                           : fmt::format(", seen from {} to {}", format_iso8601(s.first_us),
                                         format_iso8601(s.last_end_us));
}

void add_nvlink_errors(int gpu, const FabricTotals& t, std::vector<HealthFinding>& out) {
    for (std::size_t k = 0; k < k_nvlink_error_count; ++k) {
        const std::optional<double> rate = t.nvlink_rate(static_cast<NvlinkError>(k));
        if (!rate || t.nvlink_errors[k] <= 0 || *rate < k_nvlink_errors_per_hour[k]) {
            continue;
        }
        out.push_back(HealthFinding{
            "nvlink-errors", gpu, 0,
            fmt::format("GPU {}: NVLink {} errors at {:.0f} per hour ({} in {:.3f} card-hours "
                        "read; DCGM's limit {:.0f} per hour){}",
                        gpu, k_nvlink_error_names[k], *rate, t.nvlink_errors[k],
                        to_hours(t.nvlink_known_us[k]), k_nvlink_errors_per_hour[k],
                        seen_of(t.nvlink_errors_seen))});
    }
}

void add_links_down(int gpu, const FabricTotals& t, std::vector<HealthFinding>& out) {
    if (t.links_down_us <= 0) {
        return;
    }
    const double share =
        static_cast<double>(t.links_down_us) / static_cast<double>(t.links_known_us);
    out.push_back(HealthFinding{
        "nvlink-down", gpu, share,
        fmt::format("GPU {}: NVLink links down ({} of {} active at the fewest) for {:.3f} "
                    "card-hours, {:.1f}% of the time with the links read{}",
                    gpu, t.links_active_min, t.links, to_hours(t.links_down_us), 100.0 * share,
                    seen_of(t.links_down_seen))});
}

void add_pcie_findings(int gpu, const FabricTotals& t, std::vector<HealthFinding>& out) {
    if (t.pcie_known_active_us > 0 && t.pcie_degraded_active_us > 0) {
        const double share = static_cast<double>(t.pcie_degraded_active_us) /
                             static_cast<double>(t.pcie_known_active_us);
        if (share >= k_pcie_degraded_finding_share) {
            out.push_back(HealthFinding{
                "pcie-degraded", gpu, share,
                fmt::format("GPU {}: PCIe link below its maximum (gen{} x{}) for {:.1f}% of the "
                            "active time read ({:.3f} of {:.3f} active card-hours, as low as "
                            "gen{} x{}){}",
                            gpu, t.pcie_gen_max, t.pcie_width_max, 100.0 * share,
                            to_hours(t.pcie_degraded_active_us), to_hours(t.pcie_known_active_us),
                            t.pcie_gen_low, t.pcie_width_low, seen_of(t.pcie_degraded_seen))});
        }
    }
    const std::optional<double> replays = t.pcie_replay_rate();
    if (replays && *replays > k_pcie_replays_per_hour) {
        out.push_back(HealthFinding{
            "pcie-replays", gpu, 0,
            fmt::format("GPU {}: PCIe replays at {:.0f} per hour ({} in {:.3f} card-hours read; "
                        "DCGM's limit {:.0f} per hour)",
                        gpu, *replays, t.pcie_replays, to_hours(t.pcie_replay_known_us),
                        k_pcie_replays_per_hour)});
    }
}

} // namespace

void add_fabric_findings(int gpu, const FabricTotals& t, std::vector<HealthFinding>& out) {
    add_nvlink_errors(gpu, t, out);
    add_links_down(gpu, t, out);
    add_pcie_findings(gpu, t, out);
    if (t.remap_failed_us > 0) {
        out.push_back(HealthFinding{
            "row-remap-failure", gpu, 0,
            fmt::format("GPU {}: the row remapper failed (no spare row left for a failing memory "
                        "row) for {:.3f} card-hours{}",
                        gpu, to_hours(t.remap_failed_us), seen_of(t.remap_failed_seen))});
    }
}

} // namespace gua::audit

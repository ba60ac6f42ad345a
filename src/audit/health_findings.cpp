// SPDX-License-Identifier: Apache-2.0
// §9's health decisions: thresholds applied to a card's or an identity's health totals, each
// finding with the measured figures in its detail.
#include "audit/health_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace gua::audit {

LightTimes light_times(const LoadBins& bins, const GpmTotals* gpm, int light_power_pct) {
    const auto sm = static_cast<std::size_t>(GpmMetric::sm_active);
    if (gpm != nullptr && gpm->active_us[sm] > 0) {
        return LightTimes{gpm->active_us[sm], gpm->light_active_us, true};
    }
    LightTimes t;
    for (DurationUs b : bins) {
        t.known += b;
    }
    t.light = light_us(bins, light_power_pct);
    return t;
}

void add_throttle_findings(int gpu, const ThrottleTotals& t, std::vector<HealthFinding>& out) {
    const ThrottleShares s = throttle_shares(t);
    const auto pct = [&](ThrottleReason r) {
        return 100.0 * s.reason[static_cast<std::size_t>(r)].value_or(0);
    };
    const std::string clock =
        s.clock_ratio
            ? fmt::format("; SM clock {:.0f}% of its highest while active", 100.0 * *s.clock_ratio)
            : std::string();
    if (s.thermal && *s.thermal >= k_throttle_finding_share) {
        out.push_back(HealthFinding{
            "thermal-throttling", gpu, *s.thermal,
            fmt::format("GPU {}: clocks held back by heat {:.1f}% of active time (software "
                        "thermal {:.1f}%, hardware thermal {:.1f}%){}",
                        gpu, 100.0 * *s.thermal, pct(ThrottleReason::sw_thermal),
                        pct(ThrottleReason::hw_thermal), clock)});
    }
    if (s.power && *s.power >= k_throttle_finding_share) {
        out.push_back(HealthFinding{
            "power-capping", gpu, *s.power,
            fmt::format("GPU {}: clocks held back by the power limit {:.1f}% of active time "
                        "(power cap {:.1f}%, power brake {:.1f}%){}",
                        gpu, 100.0 * *s.power, pct(ThrottleReason::sw_power_cap),
                        pct(ThrottleReason::hw_power_brake), clock)});
    }
}

void add_memory_findings(int gpu, const MemoryTotals& t, std::vector<HealthFinding>& out) {
    if (t.known_us > 0) {
        const double share = static_cast<double>(t.pressure_us) / static_cast<double>(t.known_us);
        if (share >= k_memory_pressure_finding_share) {
            out.push_back(HealthFinding{
                "memory-pressure", gpu, share,
                fmt::format("GPU {}: memory used at or above {:.0f}% of the total for {} "
                            "card-hours ({:.1f}% of its time with memory read)",
                            gpu, 100.0 * k_memory_pressure_share,
                            fmt::format("{:.2f}", to_hours(t.pressure_us)), 100.0 * share)});
        }
    }
    const double gib_hours = gib_hours_of_mib_ms(t.ghost_mib_ms);
    if (t.ghost_known_us > 0 && gib_hours > 0) {
        // A fleet report reads the sums from counters, without the first and last card-tick.
        const std::string seen =
            t.ghost_first_us == 0
                ? std::string()
                : fmt::format(", seen from {} to {}", format_iso8601(t.ghost_first_us),
                              format_iso8601(t.ghost_last_end_us));
        out.push_back(HealthFinding{
            "ghost-memory", gpu, 0,
            fmt::format("GPU {}: {:.2f} GiB-hours of memory held with no live process "
                        "accounting for it{}",
                        gpu, gib_hours, seen)});
    }
}

void add_gpm_findings(int gpu, const GpmTotals& t, DurationUs active_us,
                      std::vector<HealthFinding>& out) {
    const double active_hours = to_hours(active_us);
    const auto known_hours = [&](GpmMetric m) {
        return to_hours(t.active_us[static_cast<std::size_t>(m)]);
    };
    const auto covered = [&](GpmMetric m) {
        return t.mean(m) && active_hours > 0 && known_hours(m) >= k_gpm_min_coverage * active_hours;
    };
    const auto mean = [&](GpmMetric m) { return *t.mean(m); };
    using M = GpmMetric;
    if (covered(M::tensor_active) && covered(M::fp32_active) &&
        mean(M::tensor_active) < k_tensor_idle_max_share &&
        mean(M::fp32_active) >= k_tensor_idle_min_fp32_share) {
        out.push_back(HealthFinding{
            "tensor-idle", gpu, mean(M::fp32_active),
            fmt::format("GPU {}: over {:.2f} active card-hours with GPM readings, the FP32 pipes "
                        "were active {:.1f}% of the time and the tensor pipes {:.1f}%: the math "
                        "runs on CUDA cores, not on Tensor Cores",
                        gpu, known_hours(M::fp32_active), 100.0 * mean(M::fp32_active),
                        100.0 * mean(M::tensor_active))});
    }
    if (covered(M::dram_bw) && mean(M::dram_bw) >= k_dram_bound_min_share) {
        out.push_back(HealthFinding{
            "dram-bound", gpu, mean(M::dram_bw),
            fmt::format("GPU {}: over {:.2f} active card-hours with GPM readings, DRAM bandwidth "
                        "averaged {:.1f}% of its peak{}",
                        gpu, known_hours(M::dram_bw), 100.0 * mean(M::dram_bw),
                        covered(M::sm_active)
                            ? fmt::format(" with the SMs active {:.1f}% of the time",
                                          100.0 * mean(M::sm_active))
                            : std::string())});
    }
}

void add_light_finding(int gpu, const LightTimes& t, int light_power_pct,
                       std::vector<HealthFinding>& out) {
    if (t.known <= 0) {
        return;
    }
    const double share = static_cast<double>(t.light) / static_cast<double>(t.known);
    if (share < k_light_finding_share) {
        return;
    }
    out.push_back(HealthFinding{
        "busy-but-light", gpu, share,
        t.by_gpm ? fmt::format("GPU {}: {:.2f} of {:.2f} active card-hours ({:.1f}%) had the SMs "
                               "active less than {}% of the time (GPM)",
                               gpu, to_hours(t.light), to_hours(t.known), 100.0 * share,
                               k_gpm_light_sm_cpct / 100)
                 : fmt::format("GPU {}: {:.2f} of {:.2f} active card-hours ({:.1f}%) drew less "
                               "than {}% of the power limit",
                               gpu, to_hours(t.light), to_hours(t.known), 100.0 * share,
                               light_power_pct)});
}

void add_imbalance_finding(const std::string& name, const std::vector<CardActivity>& cards,
                           std::vector<HealthFinding>& out) {
    const std::optional<Imbalance> spread = imbalance(cards, k_imbalance_min_us);
    if (spread && spread->busiest_share - spread->idlest_share >= k_imbalance_share) {
        out.push_back(HealthFinding{
            "imbalance", spread->idlest_gpu, spread->busiest_share - spread->idlest_share,
            fmt::format("{} held {} cards: GPU {} active {:.1f}% of its held time, GPU {} "
                        "{:.1f}%",
                        name, cards.size(), spread->busiest_gpu, 100.0 * spread->busiest_share,
                        spread->idlest_gpu, 100.0 * spread->idlest_share)});
    }
}

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// §9's health decisions: which readings of a card or an identity become a finding, and its
// one-sentence detail. Pure: report/build_health.cpp maps the store's tables onto these.
#pragma once

#include "audit/health.hpp"
#include "audit/imbalance.hpp"
#include "core/time.hpp"

#include <string>
#include <vector>

namespace gua::audit {

/// One §9 finding: what was measured on which card (driver index), as a share of active time.
struct HealthFinding {
    std::string id;
    int gpu = 0;
    double share = 0;   ///< the share of active time behind it
    std::string detail; ///< what was measured, one sentence with units
};

/// Light and judged active time of a card or identity: by GPM SM active where the card read it
/// (what the SMs did), else by power over its limit in the load bins.
struct LightTimes {
    DurationUs known = 0;
    DurationUs light = 0;
    bool by_gpm = false;
};

/// The light time of `bins` (or of `gpm`'s SM active, when not null and read).
LightTimes light_times(const LoadBins& bins, const GpmTotals* gpm, int light_power_pct);

/// Thermal throttling and power capping of card `gpu`, each when it held the clocks back for at
/// least k_throttle_finding_share of the active time.
void add_throttle_findings(int gpu, const ThrottleTotals& t, std::vector<HealthFinding>& out);

/// Memory pressure (used ≥ k_memory_pressure_share of the total for at least
/// k_memory_pressure_finding_share of the time read) and ghost memory (held with no process).
void add_memory_findings(int gpu, const MemoryTotals& t, std::vector<HealthFinding>& out);

/// Tensor pipes idle while FP32 math runs, and DRAM-bound work, from GPM readings that cover at
/// least k_gpm_min_coverage of the card's `active_us` (docs/health.md).
void add_gpm_findings(int gpu, const GpmTotals& t, DurationUs active_us,
                      std::vector<HealthFinding>& out);

/// Busy but light: at least k_light_finding_share of the judged active time was light.
void add_light_finding(int gpu, const LightTimes& t, int light_power_pct,
                       std::vector<HealthFinding>& out);

/// NVLink errors above DCGM's limits, NVLink links down, a PCIe link below its maximum while
/// active, PCIe replays above DCGM's limit and a row remapping failure (docs/health.md, "NVLink,
/// PCIe and row remapping"); nothing where the reading was never given.
void add_fabric_findings(int gpu, const FabricTotals& t, std::vector<HealthFinding>& out);

/// Imbalance: identity `name` held `cards` whose activity differs by k_imbalance_share or more.
void add_imbalance_finding(const std::string& name, const std::vector<CardActivity>& cards,
                           std::vector<HealthFinding>& out);

} // namespace gua::audit

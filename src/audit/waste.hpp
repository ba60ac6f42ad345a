// SPDX-License-Identifier: Apache-2.0
// Waste and the 20 % rule: idle-held and truly-idle GPU-hours, and GPUs equivalently unused.
#pragma once

#include "audit/classify.hpp"

#include <cstddef>
#include <vector>

namespace gua::audit {

/// The share of observed card time above which idle-held is an allocation-policy problem.
inline constexpr double k_idle_held_policy_share = 0.20;

/// Waste over a window. Shares are of measured card time (active + idle-held + allocated-unused +
/// truly idle). The 20 % rule judges blocked time: idle-held + allocated-unused (equal to
/// idle-held without an allocation source).
struct Waste {
    double idle_held_gpu_hours = 0;
    double truly_idle_gpu_hours = 0;
    double idle_held_share = 0;
    double truly_idle_share = 0;
    double allocated_unused_gpu_hours = 0;
    double allocated_unused_share = 0;
    double blocked_share = 0;               ///< idle_held_share + allocated_unused_share
    double idle_held_equiv_gpus = 0;        ///< idle-held share × measured GPUs
    double allocated_unused_equiv_gpus = 0; ///< allocated-unused share × measured GPUs
    double truly_idle_equiv_gpus = 0;       ///< truly-idle share × measured GPUs
    std::size_t cards_in_window = 0;
    /// Measured capacity: Σ over cards of their measured share of their recorded time (a card
    /// never measured, such as a MIG instance, counts 0).
    double measured_gpus = 0;
    bool policy_problem = false; ///< blocked share above k_idle_held_policy_share
    /// The idle-held share of all recorded card time at the least and the most that unmeasured
    /// time and snapshot error allow: none of the unmeasured time idle-held and every snapshot
    /// second wrongly so (low), or all of it idle-held and every snapshot second wrongly not
    /// (high).
    double idle_held_share_low = 0;
    double idle_held_share_high = 0;
    /// The same bounds for blocked time (idle-held + allocated-unused): what the verdict judges.
    double blocked_share_low = 0;
    double blocked_share_high = 0;
    /// True when both blocked bounds fall on the same side of k_idle_held_policy_share.
    bool verdict_certain = true;
    /// Idle-held time after a hardware, driver or interconnect fault: not waste, not in the
    /// shares above (audit/fault_loss.hpp).
    double lost_to_faults_gpu_hours = 0;
};

/// Computes waste from the state times of each card that had ticks in the window, of which
/// `snapshot_us` was measured by once-per-poll snapshots.
Waste compute_waste(const std::vector<StateTimes>& cards, DurationUs snapshot_us);

/// Rounds shares (fractions summing to 1, or all zero) to percentages with `decimals` places
/// that add up to exactly 100 (largest remainder method), so displayed rows always sum to 100 %.
std::vector<double> rounded_percentages(const std::vector<double>& shares, int decimals);

} // namespace gua::audit

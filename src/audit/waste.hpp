// Waste and the 20 % rule: idle-held and truly-idle GPU-hours, and GPUs equivalently unused.
#pragma once

#include "audit/classify.hpp"

#include <cstddef>
#include <vector>

namespace gua::audit {

/// The share of observed card time above which idle-held is an allocation-policy problem.
inline constexpr double k_idle_held_policy_share = 0.20;

/// Waste over a window. Shares are of measured card time (active + idle-held + truly idle).
struct Waste {
    double idle_held_gpu_hours = 0;
    double truly_idle_gpu_hours = 0;
    double idle_held_share = 0;
    double truly_idle_share = 0;
    double idle_held_equiv_gpus = 0;  ///< idle-held share × cards present in the window
    double truly_idle_equiv_gpus = 0; ///< truly-idle share × cards present in the window
    std::size_t cards_in_window = 0;
    bool policy_problem = false; ///< idle-held share above k_idle_held_policy_share
};

/// Computes waste from window state times and the number of cards that had ticks in the window.
Waste compute_waste(const StateTimes& states, std::size_t cards_in_window);

/// Rounds shares (fractions summing to 1, or all zero) to percentages with `decimals` places
/// that add up to exactly 100 (largest remainder method), so displayed rows always sum to 100 %.
std::vector<double> rounded_percentages(const std::vector<double>& shares, int decimals);

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Combining remedies without over-promising: remedies for the same waste count once (the larger),
// independent ones combine as 1 − Π(1 − f_i), never as a sum; the result is capped by the measured
// baseline, and a price cut (spot) composes multiplicatively: 1 − (1 − u)(1 − s).
#pragma once

#include "audit/pools.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace gua::audit {

/// Value of every pool on every card, in micro-units of currency (price × pool time). The
/// baseline of the savings is their sum.
using PoolValues = std::vector<std::array<double, k_pool_count>>;

/// A remedy's claim on one pool of one card: it wins back `recovery` (0–1) of it.
struct Claim {
    std::size_t card = 0; ///< index into PoolValues
    Pool pool = Pool::held_office;
    double recovery = 0;
};

/// Sum of all pool values (micro-units); the cap of every saving.
double baseline_of(const PoolValues& values);

/// The saving fraction f of one remedy: Σ recovery × value over its claims (a repeated card and
/// pool counts once, with its largest recovery), divided by the baseline; in [0, 1], 0 without
/// a baseline.
double savings_fraction(const PoolValues& values, const std::vector<Claim>& claims);

/// 1 − Π(1 − f_i) with each f_i clamped to [0, 1]: the combined fraction of independent remedies.
double combine_independent(const std::vector<double>& fractions);

/// 1 − (1 − u)(1 − s): a utilization fix u composed with a rate reduction s (both clamped).
double compose_rate(double utilization, double rate_reduction);

/// One remedy as the combination sees it. Remedies sharing `group` recover the same waste.
struct Remedy {
    std::string group;
    double fraction = 0;       ///< f: share of the baseline it saves by itself
    double rate_reduction = 0; ///< s: price cut on the remaining waste (spot), 0 for none
};

/// One independent group's factor in the product.
struct GroupFactor {
    std::string group;
    double fraction = 0;      ///< the largest f of the group's remedies
    std::size_t remedies = 0; ///< how many remedies the group had (> 1: counted once)
};

/// The combined saving of a set of remedies.
struct Combination {
    std::vector<GroupFactor> groups; ///< in order of first appearance
    double utilization = 0;          ///< u = 1 − Π(1 − f_group)
    double rate_reduction = 0;       ///< s = the largest rate reduction offered
    double total = 0;                ///< 1 − (1 − u)(1 − s), in [0, 1]
    double baseline = 0;             ///< measured baseline (micro-units of the window)
    double savings = 0;              ///< total × baseline, never above the baseline
    bool capped = false;             ///< a fraction had to be clamped to stay within the baseline
};

/// Combines `remedies`: the largest f per group, 1 − Π(1 − f) across groups, then the largest
/// rate reduction composed multiplicatively; savings = total × baseline ≤ baseline.
Combination combine(const std::vector<Remedy>& remedies, double baseline);

} // namespace gua::audit

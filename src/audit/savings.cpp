// SPDX-License-Identifier: Apache-2.0
// Savings combination arithmetic (see savings.hpp).
#include "audit/savings.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace gua::audit {

namespace {

double clamp01(double f) {
    return f > 0 ? std::min(f, 1.0) : 0.0; // NaN → 0
}

} // namespace

double baseline_of(const PoolValues& values) {
    double total = 0;
    for (const auto& card : values) {
        for (const double v : card) {
            total += std::max(v, 0.0);
        }
    }
    return total;
}

double savings_fraction(const PoolValues& values, const std::vector<Claim>& claims) {
    const double baseline = baseline_of(values);
    if (baseline <= 0) {
        return 0;
    }
    std::map<std::pair<std::size_t, Pool>, double> best;
    for (const Claim& c : claims) {
        if (c.card >= values.size()) {
            continue;
        }
        double& r = best[{c.card, c.pool}];
        r = std::max(r, clamp01(c.recovery));
    }
    double saved = 0;
    for (const auto& [key, recovery] : best) {
        saved += recovery * std::max(values[key.first][static_cast<std::size_t>(key.second)], 0.0);
    }
    return clamp01(saved / baseline);
}

double combine_independent(const std::vector<double>& fractions) {
    double remaining = 1.0;
    for (const double f : fractions) {
        remaining *= 1.0 - clamp01(f);
    }
    return clamp01(1.0 - remaining);
}

double compose_rate(double utilization, double rate_reduction) {
    return clamp01(1.0 - (1.0 - clamp01(utilization)) * (1.0 - clamp01(rate_reduction)));
}

Combination combine(const std::vector<Remedy>& remedies, double baseline) {
    Combination c;
    c.baseline = std::max(baseline, 0.0);
    for (const Remedy& r : remedies) {
        c.capped = c.capped || r.fraction > 1.0 || r.rate_reduction > 1.0;
        auto it = std::find_if(c.groups.begin(), c.groups.end(),
                               [&](const GroupFactor& g) { return g.group == r.group; });
        if (it == c.groups.end()) {
            c.groups.push_back(GroupFactor{r.group, clamp01(r.fraction), 1});
        } else {
            it->fraction = std::max(it->fraction, clamp01(r.fraction));
            ++it->remedies;
        }
        c.rate_reduction = std::max(c.rate_reduction, clamp01(r.rate_reduction));
    }
    std::vector<double> fractions;
    for (const GroupFactor& g : c.groups) {
        fractions.push_back(g.fraction);
    }
    c.utilization = combine_independent(fractions);
    c.total = compose_rate(c.utilization, c.rate_reduction);
    c.savings = std::min(c.total * c.baseline, c.baseline);
    return c;
}

} // namespace gua::audit

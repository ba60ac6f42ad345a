// SPDX-License-Identifier: Apache-2.0
// Waste arithmetic and display rounding that preserves totals.
#include "audit/waste.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gua::audit {

Waste compute_waste(const std::vector<StateTimes>& cards, DurationUs snapshot_us) {
    Waste w;
    StateTimes states;
    for (const StateTimes& c : cards) {
        states += c;
        const DurationUs measured =
            c.active + c.idle_held + c.truly_idle + c.allocated_unused + c.lost_to_faults;
        if (c.total() > 0) {
            ++w.cards_in_window;
            w.measured_gpus += static_cast<double>(measured) / static_cast<double>(c.total());
        }
    }
    w.idle_held_gpu_hours = to_hours(states.idle_held);
    w.truly_idle_gpu_hours = to_hours(states.truly_idle);
    w.allocated_unused_gpu_hours = to_hours(states.allocated_unused);
    w.lost_to_faults_gpu_hours = to_hours(states.lost_to_faults);
    const DurationUs blocked = states.idle_held + states.allocated_unused;
    const DurationUs measured = states.active + states.idle_held + states.truly_idle +
                                states.allocated_unused + states.lost_to_faults;
    if (measured > 0) {
        const auto of_measured = [measured](DurationUs us) {
            return static_cast<double>(us) / static_cast<double>(measured);
        };
        w.idle_held_share = of_measured(states.idle_held);
        w.truly_idle_share = of_measured(states.truly_idle);
        w.allocated_unused_share = of_measured(states.allocated_unused);
        w.blocked_share = of_measured(blocked);
    }
    w.idle_held_equiv_gpus = w.idle_held_share * w.measured_gpus;
    w.truly_idle_equiv_gpus = w.truly_idle_share * w.measured_gpus;
    w.allocated_unused_equiv_gpus = w.allocated_unused_share * w.measured_gpus;
    w.policy_problem = w.blocked_share > k_idle_held_policy_share;
    if (states.total() > 0) {
        const auto total = static_cast<double>(states.total());
        const double snapshot =
            static_cast<double>(std::clamp<DurationUs>(snapshot_us, 0, measured));
        const auto low = [&](DurationUs part) {
            return std::max(0.0, static_cast<double>(part) - snapshot) / total;
        };
        const auto high = [&](DurationUs part) {
            return std::min(1.0, static_cast<double>(part + states.unmeasured) / total +
                                     snapshot / total);
        };
        w.idle_held_share_low = low(states.idle_held);
        w.idle_held_share_high = high(states.idle_held);
        w.blocked_share_low = low(blocked);
        w.blocked_share_high = high(blocked);
        w.verdict_certain = (w.blocked_share_low > k_idle_held_policy_share) ==
                            (w.blocked_share_high > k_idle_held_policy_share);
        w.policy_problem =
            w.verdict_certain ? w.blocked_share_low > k_idle_held_policy_share : w.policy_problem;
    }
    return w;
}

std::vector<double> rounded_percentages(const std::vector<double>& shares, int decimals) {
    const double scale = std::pow(10.0, decimals);
    const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
    std::vector<double> out(shares.size(), 0.0);
    if (sum <= 0) {
        return out;
    }
    const auto total_units = static_cast<long long>(std::llround(100.0 * scale));
    std::vector<long long> units(shares.size());
    std::vector<std::pair<double, std::size_t>> remainders;
    long long used = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const double exact = shares[i] / sum * 100.0 * scale;
        units[i] = static_cast<long long>(std::floor(exact));
        used += units[i];
        remainders.emplace_back(exact - static_cast<double>(units[i]), i);
    }
    // Remainders equal up to floating-point noise are ties, broken in favour of the larger share
    // (so equal shares stay equal where possible), then by position.
    for (auto& r : remainders) {
        r.first = std::round(r.first * 1e9) / 1e9;
    }
    std::stable_sort(remainders.begin(), remainders.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) {
            return a.first > b.first;
        }
        return shares[a.second] > shares[b.second];
    });
    for (std::size_t k = 0; used < total_units && k < remainders.size(); ++k, ++used) {
        ++units[remainders[k].second];
    }
    for (std::size_t i = 0; i < shares.size(); ++i) {
        out[i] = static_cast<double>(units[i]) / scale;
    }
    return out;
}

} // namespace gua::audit

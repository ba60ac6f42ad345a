// SPDX-License-Identifier: Apache-2.0
// Least-squares memory trends (see memory_trend.hpp).
#include "audit/memory_trend.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

std::optional<MemoryTrend> memory_trend(const std::deque<MemorySample>& samples) {
    if (samples.size() < k_trend_min_samples) {
        return std::nullopt;
    }
    const auto [first, last] =
        std::minmax_element(samples.begin(), samples.end(),
                            [](const MemorySample& a, const MemorySample& b) { return a.t < b.t; });
    const DurationUs span = last->t - first->t;
    if (span < k_trend_min_span_us) {
        return std::nullopt;
    }
    // Centred sums: hours since the first reading keep the squares small and exact enough.
    const double n = static_cast<double>(samples.size());
    double mean_x = 0;
    double mean_y = 0;
    for (const MemorySample& s : samples) {
        mean_x += static_cast<double>(s.t - first->t) / static_cast<double>(k_us_per_hour);
        mean_y += static_cast<double>(s.mib);
    }
    mean_x /= n;
    mean_y /= n;
    double sxx = 0;
    double sxy = 0;
    double syy = 0;
    for (const MemorySample& s : samples) {
        const double dx =
            static_cast<double>(s.t - first->t) / static_cast<double>(k_us_per_hour) - mean_x;
        const double dy = static_cast<double>(s.mib) - mean_y;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    MemoryTrend t;
    t.span_us = span;
    t.samples = samples.size();
    t.mib_per_hour = sxx > 0 ? sxy / sxx : 0;
    t.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    return t;
}

bool is_growing(const MemoryTrend& trend) {
    const double rise = trend.mib_per_hour * static_cast<double>(trend.span_us) /
                        static_cast<double>(k_us_per_hour);
    return trend.mib_per_hour > 0 && trend.r2 >= k_growth_min_r2 &&
           rise >= static_cast<double>(k_growth_min_rise_mib);
}

std::optional<DurationUs> time_to_full(const MemoryTrend& trend, std::int64_t free_mib) {
    if (!is_growing(trend)) {
        return std::nullopt;
    }
    const double hours =
        static_cast<double>(std::max<std::int64_t>(free_mib, 0)) / trend.mib_per_hour;
    return static_cast<DurationUs>(std::llround(hours * static_cast<double>(k_us_per_hour)));
}

void TrendBook::add(const HoldingKey& key, MemorySample sample) {
    std::deque<MemorySample>& d = m_samples[key];
    while (!d.empty() && d.back().t >= sample.t) {
        d.pop_back();
    }
    d.push_back(sample);
    while (!d.empty() && d.front().t < sample.t - k_trend_window_us) {
        d.pop_front();
    }
}

std::optional<MemoryTrend> TrendBook::trend(const HoldingKey& key) const {
    const auto it = m_samples.find(key);
    return it == m_samples.end() ? std::nullopt : memory_trend(it->second);
}

void TrendBook::forget_before(TimeUs t) {
    std::erase_if(m_samples, [&](const auto& kv) { return kv.second.back().t < t; });
}

void add_card_readings(TrendBook& book, const std::string& uuid, TimeUs end,
                       const std::vector<MemoryReading>& readings) {
    std::map<ProcessKey, std::optional<std::int64_t>> held;
    for (const MemoryReading& r : readings) {
        std::optional<std::int64_t>& mib = held.try_emplace(r.key, 0).first->second;
        mib = mib && r.mib ? std::optional(*mib + *r.mib) : std::nullopt;
    }
    for (const auto& [key, mib] : held) {
        if (mib) {
            book.add(HoldingKey{uuid, key}, MemorySample{end, *mib});
        }
    }
}

} // namespace gua::audit

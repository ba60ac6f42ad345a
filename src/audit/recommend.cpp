// SPDX-License-Identifier: Apache-2.0
// The recommender's driver: pool values, the rule list (explicit, in order), savings combination.
#include "audit/recommend.hpp"

#include "audit/rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::audit {

namespace rules {

double measured_us(const CardEvidence& card) {
    return static_cast<double>(card.states.active + card.states.idle_held + card.states.truly_idle +
                               card.states.allocated_unused + card.states.lost_to_faults);
}

std::string card_text(const CardEvidence& card) {
    return card.model.empty() ? fmt::format("GPU {}", card.index)
                              : fmt::format("GPU {} ({})", card.index, card.model);
}

std::string pct_text(double share) {
    return fmt::format("{:.1f} %", share * 100.0);
}

std::vector<std::string> top_identities(const Context& ctx, const std::vector<std::size_t>& cards,
                                        bool idle_held, std::size_t limit,
                                        std::vector<std::string>& names) {
    std::vector<std::pair<double, std::string>> ranked;
    for (const IdentityEvidence& id : ctx.input.identities) {
        const std::vector<double>& per_card = idle_held ? id.idle_held_us : id.active_us;
        double us = 0;
        for (const std::size_t c : cards) {
            us += c < per_card.size() ? per_card[c] : 0.0;
        }
        if (us > 0) {
            ranked.emplace_back(us, id.name);
        }
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < ranked.size() && i < limit; ++i) {
        names.push_back(ranked[i].second);
        out.push_back(
            fmt::format("{} ({} GPU-hours)", ranked[i].second,
                        format_hours(ranked[i].first / static_cast<double>(k_us_per_hour))));
    }
    return out;
}

void settle(const Context& ctx, Recommendation& r) {
    std::map<std::pair<std::size_t, Pool>, double> best;
    for (const Claim& c : r.claims) {
        double& recovery = best[{c.card, c.pool}];
        recovery = std::max(recovery, c.recovery);
    }
    r.pools.clear();
    r.addressed_gpu_hours = 0;
    r.addressed_cents = 0;
    double addressed_value = 0;
    double max_recovery = 0;
    for (const auto& [key, recovery] : best) {
        const CardEvidence& card = ctx.input.cards[key.first];
        const double us = card.pools[static_cast<std::size_t>(key.second)];
        r.addressed_gpu_hours += us / static_cast<double>(k_us_per_hour);
        r.addressed_cents += share_cost_cents(us, card.micros_per_gpu_hour);
        addressed_value += ctx.values[key.first][static_cast<std::size_t>(key.second)];
        max_recovery = std::max(max_recovery, recovery);
        if (std::find(r.pools.begin(), r.pools.end(), key.second) == r.pools.end()) {
            r.pools.push_back(key.second);
        }
    }
    std::sort(r.pools.begin(), r.pools.end());
    r.fraction = savings_fraction(ctx.values, r.claims);
    r.recovery = addressed_value > 0 ? r.fraction * ctx.baseline / addressed_value : max_recovery;
}

} // namespace rules

Advice recommend(const RecommendInput& input) {
    rules::Context ctx{input, {}, 0};
    Advice advice;
    double baseline_hourly = 0;
    for (const CardEvidence& card : input.cards) {
        std::array<double, k_pool_count> value{};
        double card_pools_us = 0;
        for (std::size_t p = 0; p < k_pool_count; ++p) {
            const double us = std::max(card.pools[p], 0.0);
            value[p] = us * static_cast<double>(card.micros_per_gpu_hour) /
                       static_cast<double>(k_us_per_hour);
            card_pools_us += us;
            advice.pool_gpu_hours[p] += us / static_cast<double>(k_us_per_hour);
            advice.pool_cents[p] += share_cost_cents(us, card.micros_per_gpu_hour);
            advice.pool_micros[p] += value[p];
        }
        ctx.values.push_back(value);
        baseline_hourly +=
            hourly_micros(card_pools_us, static_cast<DurationUs>(rules::measured_us(card)),
                          card.micros_per_gpu_hour);
    }
    ctx.baseline = baseline_of(ctx.values);
    for (const std::int64_t cents : advice.pool_cents) {
        advice.baseline_cents += cents;
    }
    advice.baseline_rate = run_rate(baseline_hourly);

    using Rule = std::optional<Recommendation> (*)(const rules::Context&);
    static constexpr std::array<Rule, 8> k_rules{
        rules::idle_culling,   rules::gpu_sharing,  rules::off_hours,     rules::data_loader,
        rules::larger_batches, rules::memory_bound, rules::compute_bound, rules::over_allocation};
    std::vector<Remedy> remedies;
    for (const Rule rule : k_rules) {
        std::optional<Recommendation> r = rule(ctx);
        if (!r) {
            continue;
        }
        rules::settle(ctx, *r);
        advice.recommendations.push_back(std::move(*r));
    }
    std::stable_sort(advice.recommendations.begin(), advice.recommendations.end(),
                     [](const Recommendation& a, const Recommendation& b) {
                         return a.fraction != b.fraction ? a.fraction > b.fraction : a.id < b.id;
                     });
    for (const Recommendation& r : advice.recommendations) {
        remedies.push_back(Remedy{r.group, r.fraction, r.rate_reduction});
    }
    advice.combination = combine(remedies, ctx.baseline);
    advice.savings_rate = run_rate(advice.combination.total * baseline_hourly);
    return advice;
}

} // namespace gua::audit

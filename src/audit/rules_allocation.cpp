// SPDX-License-Identifier: Apache-2.0
// The allocation rule: jobs and pods that asked for more GPUs than their work used.
#include "audit/rules.hpp"
#include "core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::audit::rules {

namespace rules_allocation_cpp { // named after the file: unique in a unity batch

/// One allocation that left at least one of its cards unused.
struct Flagged {
    const AllocationEvidence* allocation = nullptr;
    std::size_t used_cards = 0;
    DurationUs allocated_us = 0;
    DurationUs unused_us = 0;
};

/// The allocation's cards it used and its totals; nullopt when it used every card it held.
std::optional<Flagged> flag(const AllocationEvidence& a) {
    Flagged f{&a};
    bool any_unused = false;
    for (std::size_t i = 0; i < a.cards.size(); ++i) {
        const DurationUs allocated = i < a.allocated_us.size() ? a.allocated_us[i] : 0;
        const DurationUs unused = i < a.unused_us.size() ? a.unused_us[i] : 0;
        f.allocated_us += allocated;
        f.unused_us += unused;
        const bool unused_card =
            allocated > 0 && static_cast<double>(unused) >=
                                 k_allocation_unused_card_share * static_cast<double>(allocated);
        any_unused = any_unused || unused_card;
        f.used_cards += unused_card ? 0 : 1;
    }
    if (!any_unused || f.unused_us <= 0) {
        return std::nullopt;
    }
    return f;
}

std::string evidence_of(const Flagged& f) {
    const AllocationEvidence& a = *f.allocation;
    const double h = static_cast<double>(k_us_per_hour);
    return fmt::format("{} {} ({}): used {} of {} allocated GPU{}; {} GPU-hours allocated-unused "
                       "({} of the {} GPU-hours it held)",
                       a.kind, a.id, a.owner.empty() ? "(unknown)" : a.owner, f.used_cards,
                       a.cards.size(), a.cards.size() == 1 ? "" : "s",
                       format_hours(static_cast<double>(f.unused_us) / h),
                       pct_text(static_cast<double>(f.unused_us) /
                                static_cast<double>(std::max<DurationUs>(f.allocated_us, 1))),
                       format_hours(static_cast<double>(f.allocated_us) / h));
}

} // namespace rules_allocation_cpp

std::optional<Recommendation> over_allocation(const Context& ctx) {
    using namespace rules_allocation_cpp;
    const RecommendInput& in = ctx.input;
    std::vector<Flagged> flagged;
    std::map<std::size_t, double> unused_on_card; // flagged allocated-unused µs per input card
    for (const AllocationEvidence& a : in.allocations) {
        if (const std::optional<Flagged> f = flag(a)) {
            flagged.push_back(*f);
            for (std::size_t i = 0; i < a.cards.size() && i < a.unused_us.size(); ++i) {
                unused_on_card[a.cards[i]] += static_cast<double>(a.unused_us[i]);
            }
        }
    }
    Recommendation r;
    for (const auto& [card, us] : unused_on_card) {
        const double pool =
            card < in.cards.size()
                ? in.cards[card].pools[static_cast<std::size_t>(Pool::allocated_unused)]
                : 0.0;
        if (pool <= 0) {
            continue;
        }
        // The flagged allocations' part of the card's pool (the rest belongs to others).
        r.claims.push_back(
            Claim{card, Pool::allocated_unused, k_allocation_recovery * std::min(us / pool, 1.0)});
        r.gpus.push_back(in.cards[card].index);
    }
    if (r.claims.empty()) {
        return std::nullopt;
    }
    std::stable_sort(flagged.begin(), flagged.end(),
                     [](const Flagged& a, const Flagged& b) { return a.unused_us > b.unused_us; });
    r.id = "over-allocation";
    r.group = "allocation";
    r.title = "Request only the GPUs jobs use: fewer GPUs, GPUs per step, or a MIG slice";
    r.remedy =
        "Match the request to the work: ask for fewer GPUs (`--gres=gpu:N`, `nvidia.com/gpu` "
        "limits) where a job used fewer than it held; in a multi-step job request GPUs per "
        "step (`srun --gres=gpu:1` in each step) so idle steps do not hold them; give small "
        "jobs a MIG slice (e.g. `--gres=gpu:1g.10gb:1`) instead of a whole card.";
    for (std::size_t i = 0; i < flagged.size() && i < 5; ++i) {
        r.evidence.push_back(evidence_of(flagged[i]));
        const std::string& owner = flagged[i].allocation->owner;
        if (std::find(r.identities.begin(), r.identities.end(), owner) == r.identities.end()) {
            r.identities.push_back(owner);
        }
    }
    if (flagged.size() > 5) {
        r.evidence.push_back(fmt::format("and {} more allocations", flagged.size() - 5));
    }
    std::sort(r.gpus.begin(), r.gpus.end());
    return r;
}

} // namespace gua::audit::rules

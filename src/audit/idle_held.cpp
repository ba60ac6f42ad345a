// SPDX-License-Identifier: Apache-2.0
// The idle-held predicate (DESIGN.md "No double counting": a process idle-holds memory when its own
// SMs are cold, even on a card that is active for someone else).
#include "audit/idle_held.hpp"

#include <algorithm>

namespace gua::audit {

bool card_was_active(const StateTimes& card) {
    const DurationUs measured = card.active + card.idle_held + card.truly_idle;
    return measured > 0 && card.active * 2 >= measured;
}

bool is_idle_held(const ProcTick& p, const StateTimes& card, const Thresholds& thresholds) {
    if (!is_holder(p, thresholds) || (p.mem_used_mib && *p.mem_used_mib <= 0)) {
        return false;
    }
    if (p.sm_util_pct) {
        return *p.sm_util_pct < thresholds.active_util_pct;
    }
    const DurationUs measured = card.active + card.idle_held + card.truly_idle;
    return measured > 0 && !card_was_active(card);
}

std::vector<HoldingSeen> holdings_seen(const CardTick& tick, const std::vector<ProcessKey>& keys,
                                       const Thresholds& thresholds) {
    const StateTimes card = classify(tick, thresholds);
    std::vector<HoldingSeen> out;
    for (std::size_t i = 0; i < tick.processes.size() && i < keys.size(); ++i) {
        const ProcTick& p = tick.processes[i];
        if (!is_holder(p, thresholds)) {
            continue;
        }
        const bool idle = is_idle_held(p, card, thresholds);
        auto same = std::find_if(out.begin(), out.end(),
                                 [&](const HoldingSeen& s) { return s.process == keys[i]; });
        if (same == out.end()) {
            out.push_back(HoldingSeen{keys[i], idle});
        } else {
            same->idle_held = same->idle_held && idle;
        }
    }
    return out;
}

} // namespace gua::audit

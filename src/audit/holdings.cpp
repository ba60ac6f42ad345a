// SPDX-License-Identifier: Apache-2.0
// Holders and streaks of sampled or recorded card-ticks.
#include "audit/holdings.hpp"

#include "audit/idle_held.hpp"

namespace gua::audit {

CardTick card_tick_of(const CardNow& card, std::vector<ProcessKey>& keys) {
    CardTick t;
    t.t0 = card.t0;
    t.duration_us = card.duration_us;
    t.active_us = card.record->active_us;
    t.bucket_us = card.record->bucket_us;
    t.util_pct = card.record->util_pct;
    t.util_source = card.record->util_source;
    t.unmeasured_us = card.record->unmeasured_us;
    t.idle_unlisted_us = card.record->idle_unlisted_us;
    t.idle_unknown_us = card.record->idle_unknown_us;
    keys.clear();
    for (const telemetry::ProcessTick& p : card.record->processes) {
        t.processes.push_back(
            ProcTick{0, p.type, p.mem_used_mib, p.sm_util_pct, p.active_us, p.idle_held_us});
        keys.push_back(ProcessKey{p.pid, p.start_ticks});
    }
    return t;
}

std::vector<HoldingSeen> holdings_of(const CardNow& card, const Thresholds& thresholds) {
    std::vector<ProcessKey> keys;
    const CardTick tick = card_tick_of(card, keys);
    return holdings_seen(tick, keys, thresholds);
}

void observe(StreakBook& book, const std::vector<CardNow>& cards, const Thresholds& thresholds) {
    for (const CardNow& card : cards) {
        book.observe(card.record->device.uuid, card.t0, card.duration_us,
                     holdings_of(card, thresholds));
    }
}

std::vector<CardNow> cards_of(const telemetry::Tick& tick) {
    std::vector<CardNow> out;
    for (const telemetry::CardTickRecord& c : tick.cards) {
        out.push_back(CardNow{tick.t0, tick.duration_us, &c});
    }
    return out;
}

} // namespace gua::audit

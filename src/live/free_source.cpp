// SPDX-License-Identifier: Apache-2.0
// `gua free`'s two sources.
#include "live/free_source.hpp"

#include "audit/holdings.hpp"
#include "identity/resolver.hpp"
#include "store/reader.hpp"

#include <algorithm>

namespace gua::live {

namespace {

/// Each card's classified card-ticks of [from, to) by gpu id, and the owners of its newest one.
struct Recorded {
    std::map<std::int64_t, std::vector<audit::StateSpan>> spans;
    std::map<std::int64_t, std::vector<telemetry::AllocationOwner>> owners;
};

Recorded read_recorded(store::Database& db, TimeUs from, TimeUs to,
                       const audit::Thresholds& thresholds) {
    Recorded out;
    store::Reader reader(db);
    const std::vector<audit::AllocationRow> rows = reader.allocations(from, to);
    reader.scan(from, to, [&](const audit::CardTick& tick) {
        out.spans[tick.gpu].push_back(
            audit::StateSpan{tick.t0, tick.duration_us, audit::classify(tick, thresholds)});
        std::vector<telemetry::AllocationOwner>& owners = out.owners[tick.gpu];
        owners.clear(); // ticks come in time order: the newest one's stay
        for (const audit::AllocationShare& share : tick.allocations) {
            if (share.allocation < rows.size()) {
                const audit::AllocationRow& a = rows[share.allocation];
                owners.push_back(
                    {a.kind, a.id, a.user, a.account, tick.t0, tick.t0 + share.overlap_us});
            }
        }
    });
    return out;
}

} // namespace

FreeModel free_from_database(store::Database& db, const std::string& db_path,
                             const store::RecentState& recent, const audit::Thresholds& thresholds,
                             const FreeAsk& ask) {
    FreeModel m;
    m.source = "daemon";
    m.db_path = db_path;
    m.ask = ask;
    m.last_tick_end = recent.last_end;
    if (!recent.last_end) {
        return m;
    }
    const DurationUs interval = recent.run ? std::max<DurationUs>(recent.run->interval_us, 0) : 0;
    // Card-ticks starting up to three intervals before the window still cover its beginning.
    const TimeUs from = *recent.last_end - ask.for_us - 3 * interval - k_us_per_second;
    Recorded recorded = read_recorded(db, from, *recent.last_end + 1, thresholds);
    for (const store::RecentCard& card : recent.cards) {
        std::vector<audit::StateSpan>& mine = recorded.spans[card.gpu_id];
        // The newest card-tick of this card is where its judgement ends.
        std::erase_if(mine, [&](const audit::StateSpan& s) { return s.t0 > card.t0; });
        telemetry::CardTickRecord newest = card.record;
        newest.allocations = recorded.owners[card.gpu_id];
        m.gpus.push_back(judge_card(newest, mine, ask));
    }
    return m;
}

FreeModel free_from_sample(telemetry::DeviceSource& source, const sampler::SamplerOptions& options,
                           const audit::Thresholds& thresholds, Clock& clock,
                           const std::atomic<bool>& stop, const std::string& note,
                           const FreeAsk& ask) {
    identity::Resolver resolver = identity::Resolver::of_host();
    sampler::Sampler sampler(source, clock, resolver, options);
    telemetry::Tick last;
    sampler.run(stop, [&](const telemetry::Tick& tick) { last = tick; });
    FreeModel m;
    m.source = "sampled";
    m.note = note;
    m.ask = ask;
    m.last_tick_end = last.t0 + last.duration_us;
    for (const audit::CardNow& card : audit::cards_of(last)) {
        std::vector<audit::ProcessKey> keys;
        const audit::StateTimes times =
            audit::classify(audit::card_tick_of(card, keys), thresholds);
        m.gpus.push_back(
            judge_card(*card.record, {audit::StateSpan{card.t0, card.duration_us, times}}, ask));
    }
    std::sort(m.gpus.begin(), m.gpus.end(),
              [](const FreeCard& a, const FreeCard& b) { return a.index < b.index; });
    return m;
}

} // namespace gua::live

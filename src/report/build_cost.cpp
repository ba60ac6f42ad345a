// SPDX-License-Identifier: Apache-2.0
// Report building for money and advice: the audit prices and recommends, this file only maps the
// store's tables onto the audit's inputs and the results onto the model.
#include "report/build_cost.hpp"

#include "audit/cost.hpp"
#include "audit/mig.hpp"
#include "audit/recommend.hpp"
#include "report/build_allocations.hpp"

#include <map>

namespace gua::report {

namespace {

/// The pricing facts of `g`, with its parent's when the parent card is in `gpus`.
audit::CardFacts facts_of(const store::GpuRow& g, const std::vector<store::GpuRow>& gpus) {
    audit::CardFacts f{g.uuid, g.name, g.memory_total_mib, g.parent_uuid, "", std::nullopt};
    for (const store::GpuRow& p : gpus) {
        if (!g.parent_uuid.empty() && p.uuid == g.parent_uuid) {
            f.parent_name = p.name;
            f.parent_memory_total_mib = p.memory_total_mib;
        }
    }
    return f;
}

/// The allocations as the recommender sees them: per allocation, its time on the cards §8
/// covers (`card_of_gpu` maps a card's store id to its position in the input's cards).
std::vector<audit::AllocationEvidence>
allocation_evidence(const audit::WindowAccumulator& acc,
                    const std::vector<audit::AllocationRow>& allocations,
                    const std::map<std::size_t, std::size_t>& card_of_gpu) {
    std::vector<audit::AllocationEvidence> out;
    for (std::size_t a = 0; a < acc.allocations().size(); ++a) {
        const audit::AllocationTotals& t = acc.allocations()[a];
        if (t.by_gpu.empty()) {
            continue;
        }
        audit::AllocationEvidence ev;
        if (a < allocations.size()) {
            ev.kind = allocations[a].kind;
            ev.id = allocations[a].id;
            ev.owner = allocation_owner(allocations[a]).first;
        } else {
            ev.kind = "allocation";
            ev.id = std::to_string(a);
            ev.owner = "(unknown)";
        }
        for (const audit::AllocationGpuTime& g : t.by_gpu) {
            const auto card = card_of_gpu.find(g.gpu);
            if (card == card_of_gpu.end()) {
                continue;
            }
            ev.cards.push_back(card->second);
            ev.allocated_us.push_back(g.allocated_us);
            ev.unused_us.push_back(g.unused_us);
        }
        out.push_back(std::move(ev));
    }
    return out;
}

} // namespace

CardCostTable::CardCostTable(CostSection& cost, const audit::Pricing& pricing) : m_cost(cost) {
    m_cost = CostSection{};
    m_cost.currency = pricing.currency;
    m_cost.prices_configured = pricing.configured;
    m_cost.price_overridden = pricing.override_micros_per_gpu_hour.has_value();
    m_cost.spot_discount = pricing.spot_discount;
}

void CardCostTable::add(int index, const std::string& model, const audit::CardPrice& price,
                        const audit::StateTimes& states) {
    const audit::StateCost c = audit::cost_of(states, price.micros_per_gpu_hour);
    m_cost.gpus.push_back(
        GpuCostRow{index, model, price.micros_per_gpu_hour, c, price.fraction, price.rule});
    m_cost.total += c;
    const DurationUs measured =
        states.active + states.idle_held + states.truly_idle + states.allocated_unused;
    m_idle_held_hourly += audit::hourly_micros(static_cast<double>(states.idle_held), measured,
                                               price.micros_per_gpu_hour);
    m_truly_idle_hourly += audit::hourly_micros(static_cast<double>(states.truly_idle), measured,
                                                price.micros_per_gpu_hour);
    m_allocated_unused_hourly += audit::hourly_micros(static_cast<double>(states.allocated_unused),
                                                      measured, price.micros_per_gpu_hour);
}

void CardCostTable::finish() {
    m_cost.idle_held_rate = audit::run_rate(m_idle_held_hourly);
    m_cost.truly_idle_rate = audit::run_rate(m_truly_idle_hourly);
    m_cost.allocated_unused_rate = audit::run_rate(m_allocated_unused_hourly);
    m_cost.waste_rate =
        audit::RunRate{m_cost.idle_held_rate.hourly_cents + m_cost.truly_idle_rate.hourly_cents +
                       m_cost.allocated_unused_rate.hourly_cents};
}

namespace {

/// Where each GPU of the window sits among the recommender's cards, and its price.
struct CardPlaces {
    std::map<std::size_t, std::size_t> card_of_gpu;   ///< gpu table id → position in input.cards
    std::map<std::size_t, std::int64_t> price_of_gpu; ///< gpu table id → micros per GPU-hour
};

/// §7's card rows and the recommender's cards, each GPU that recorded priced once.
CardPlaces price_window_cards(const audit::WindowAccumulator& acc,
                              const std::vector<store::GpuRow>& gpus, const audit::Pricing& pricing,
                              CardCostTable& table, audit::RecommendInput& input) {
    CardPlaces places;
    for (const store::GpuRow& g : gpus) {
        const auto id = static_cast<std::size_t>(g.id);
        if (id >= acc.gpus().size() || acc.gpus()[id].ticks == 0) {
            continue;
        }
        const audit::GpuTotals& t = acc.gpus()[id];
        const audit::CardPrice card_price = audit::card_price(pricing, facts_of(g, gpus));
        const std::int64_t price = card_price.micros_per_gpu_hour;
        places.price_of_gpu[id] = price;
        places.card_of_gpu[id] = input.cards.size();
        table.add(g.index, g.name, card_price, t.states);
        input.cards.push_back(audit::CardEvidence{g.index, g.name, g.memory_total_mib, price,
                                                  t.states, t.pools, t.profile});
    }
    table.finish();
    return places;
}

/// Identities: each (identity, card) piece priced at the card's price, summed per group, into
/// §7's identity rows (in §4's order) and the recommender's identities.
void price_identities(const audit::WindowAccumulator& acc,
                      const std::vector<store::IdentityRow>& identities,
                      const BuildOptions& options, const CardPlaces& places,
                      audit::RecommendInput& input, ReportModel& m) {
    std::map<std::string, IdentityCostRow> cost_of_group;
    std::map<std::string, audit::IdentityEvidence> evidence_of_group;
    const auto add = [&](const std::string& group, const audit::IdentityTotals& t) {
        IdentityCostRow& row = cost_of_group[group];
        audit::IdentityEvidence& ev = evidence_of_group[group];
        ev.name = group;
        ev.active_us.resize(input.cards.size());
        ev.idle_held_us.resize(input.cards.size());
        for (const audit::IdentityGpuTime& g : t.by_gpu) {
            const auto price = places.price_of_gpu.find(g.gpu);
            if (price == places.price_of_gpu.end()) {
                continue;
            }
            const auto active = static_cast<double>(g.active_us);
            const auto idle_held = static_cast<double>(g.idle_held_us);
            row.active_cents += audit::share_cost_cents(active, price->second);
            row.idle_held_cents += audit::share_cost_cents(idle_held, price->second);
            const std::size_t card = places.card_of_gpu.at(g.gpu);
            ev.active_us[card] += active;
            ev.idle_held_us[card] += idle_held;
        }
    };
    for (const store::IdentityRow& i : identities) {
        const auto id = static_cast<std::size_t>(i.id);
        if (id < acc.identities().size() && acc.identities()[id].ticks > 0) {
            add(options.grouping.group_of(i.identity), acc.identities()[id]);
        }
    }
    if (!acc.identities().empty() && acc.identities()[0].ticks > 0) {
        add("(no process)", acc.identities()[0]);
    }
    for (const IdentityRow& r : m.identities) {
        IdentityCostRow row = cost_of_group[r.name];
        row.name = r.name;
        m.cost.identities.push_back(row);
    }
    for (auto& [name, ev] : evidence_of_group) {
        if (name != "(no process)") {
            input.identities.push_back(std::move(ev));
        }
    }
}

} // namespace

void build_cost_and_advice(const audit::WindowAccumulator& acc, const WindowTables& tables,
                           const BuildOptions& options, DurationUs recorded_us, ReportModel& m) {
    const audit::Pricing& pricing = options.pricing;
    CardCostTable table(m.cost, pricing);
    audit::RecommendInput input;
    input.time_zone = m.time_zone;
    input.recorded_us = recorded_us;
    input.spot_discount = pricing.spot_discount;
    input.heatmap = acc.heatmap();
    const CardPlaces places = price_window_cards(acc, tables.gpus, pricing, table, input);
    std::map<std::uint32_t, std::int64_t> micros_of_gpu;
    for (const auto& [id, price] : places.price_of_gpu) {
        micros_of_gpu[static_cast<std::uint32_t>(id)] = price;
    }
    m.allocation = allocation_section(acc, tables.identities, tables.allocations, options.grouping,
                                      micros_of_gpu);
    input.allocations = allocation_evidence(acc, tables.allocations, places.card_of_gpu);
    price_identities(acc, tables.identities, options, places, input, m);
    m.advice = audit::recommend(input);
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// Finishing TickBuilder's tick: each card's totals rounded to integers that add up exactly, its
// processes' active and idle-held parts, the cards in index order.
#include "sampler/fold.hpp"
#include "sampler/fold_detail.hpp"

#include <algorithm>
#include <cmath>

namespace gua::sampler {

using fold_detail::key_is;
using fold_detail::round_within;

void TickBuilder::finish_card(CardAcc& card) const {
    telemetry::CardTickRecord& r = card.record;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        CardAcc::Counter& c = card.counters[static_cast<std::size_t>(f.field)];
        if (f.fold == telemetry::Fold::counter && c.known) {
            // Whole quanta, the remainder carried: the sum over ticks stays exact.
            const std::int64_t total = c.increase + c.carry;
            const std::int64_t q = f.quantum;
            const std::int64_t whole = (total + q / 2) / q * q;
            c.carry = total - whole;
            r.readings.*f.value = whole;
        }
        const CardAcc::Mean& m = card.means[static_cast<std::size_t>(f.field)];
        if (f.fold == telemetry::Fold::mean && m.span > 0) {
            r.readings.*f.value = std::llround(m.weighted / static_cast<double>(m.span));
        }
    }
    if (card.measured_polls == 0) {
        r.util_source = telemetry::UtilSource::none;
        if (card.lost || card.partial) {
            // Measurement was attempted and failed all along: all of the tick is unmeasured.
            r.active_us = 0;
            r.unmeasured_us = m_span;
        }
        // Otherwise never measurable (MIG, unsupported): active_us stays nullopt, which marks the
        // whole tick unmeasured, as in older recordings.
        return;
    }
    // Integers add up exactly: buckets + unmeasured = duration; active and the idle parts lie
    // within the measured time.
    const DurationUs measured = round_within(card.measured, m_span);
    r.unmeasured_us = m_span - measured;
    r.util_pct = card.util_weighted / card.measured;
    DurationUs assigned = 0;
    for (std::size_t b = 0; b < 4; ++b) {
        r.bucket_us[b] = std::llround(card.buckets[b]);
        assigned += r.bucket_us[b];
    }
    // Rounding must not make the buckets disagree with the measured time.
    *std::max_element(r.bucket_us.begin(), r.bucket_us.end()) += measured - assigned;
    r.active_us = round_within(card.active, measured);
    const DurationUs not_active = measured - *r.active_us;
    r.idle_unknown_us = round_within(card.idle_unknown, not_active);
    r.idle_unlisted_us = round_within(card.idle_unlisted, not_active - r.idle_unknown_us);
    if (card.partial || r.unmeasured_us > 0) {
        r.util_source = telemetry::UtilSource::partial;
    } else if (card.snapshot) {
        r.util_source = telemetry::UtilSource::snapshot;
    } else {
        r.util_source = telemetry::UtilSource::samples;
    }
}

void TickBuilder::finish(std::uint64_t seq, telemetry::Tick& tick) {
    const bool same_tick = &tick == m_last_out; // holding what the previous finish() wrote
    m_last_out = &tick;
    tick.seq = seq;
    tick.t0 = m_t0;
    tick.duration_us = m_span;
    tick.lost_uuids.clear();
    std::size_t n = 0;
    for (auto& [uuid, card] : m_cards) {
        if (!card.present) {
            continue;
        }
        if (card.lost) {
            tick.lost_uuids.push_back(uuid);
        }
        finish_card(card);
        cross_allocations(card);
        if (tick.cards.size() == n) {
            tick.cards.emplace_back();
        }
        telemetry::CardTickRecord& out = tick.cards[n++];
        const bool same_card = same_tick && out.device.uuid == card.record.device.uuid;
        // Copy-assignments below reuse the storage of the previous tick's records.
        std::vector<telemetry::ProcessTick> processes = std::move(out.processes);
        out = card.record;
        out.processes = std::move(processes);
        write_processes(card, same_card, out);
    }
    tick.cards.resize(n);
    std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
        return a.device.index != b.device.index ? a.device.index < b.device.index
                                                : a.device.uuid < b.device.uuid;
    });
}

void TickBuilder::cross_allocations(CardAcc& card) const {
    if (m_allocations == nullptr) {
        return;
    }
    const std::string& id = card.record.device.uuid;
    card.allocation.finish(*m_allocations,
                           card_query(card.record.device, m_device_source
                                                              ? m_device_source->gpu_instance_of(id)
                                                              : std::nullopt),
                           m_t0, m_span, card.record);
}

void TickBuilder::write_processes(const CardAcc& card, bool same_card,
                                  telemetry::CardTickRecord& out) const {
    const telemetry::CardTickRecord& r = card.record;
    // Per-process active time: cumulative rounding keeps each within 1 µs of its share and the
    // sum within the card's active time.
    const DurationUs card_active = r.active_us.value_or(0);
    double cumulative = 0;
    DurationUs attributed = 0;
    // Per-process idle-held time: the same cumulative rounding, scaled so that the parts add up
    // exactly to the card's idle-held time (its measured idle time neither unlisted nor of
    // unknown holders).
    const DurationUs card_held =
        r.active_us ? std::max<DurationUs>(m_span - r.unmeasured_us - card_active -
                                               r.idle_unknown_us - r.idle_unlisted_us,
                                           0)
                    : 0;
    const double held_scale =
        card.idle_held > 0 ? static_cast<double>(card_held) / card.idle_held : 0.0;
    double held_cumulative = 0;
    DurationUs held_attributed = 0;
    std::size_t m = 0;
    for (const std::uint32_t index : card.order) {
        const ProcAcc& acc = card.processes[index];
        if (!acc.seen) {
            continue;
        }
        if (out.processes.size() == m) {
            out.processes.emplace_back();
        }
        telemetry::ProcessTick& p = out.processes[m++];
        write_process(acc, same_card, p);
        if (acc.has_sm) {
            cumulative += acc.active;
            const DurationUs upto = round_within(cumulative, card_active);
            p.active_us = upto - attributed;
            attributed = upto;
        }
        if (r.active_us && is_holder_type(acc.tick.type)) {
            held_cumulative += acc.idle_held * held_scale;
            const DurationUs upto = round_within(held_cumulative, card_held);
            p.idle_held_us = upto - held_attributed;
            held_attributed = upto;
        }
    }
    out.processes.resize(m);
}

void TickBuilder::write_process(const ProcAcc& acc, bool same_card, telemetry::ProcessTick& p) {
    // This card's entry of the previous tick for the same process holds its identity already,
    // unless that changed during this tick.
    if (!same_card || acc.fresh || !key_is(p, acc.tick.pid, acc.tick.type, acc.tick.start_ticks)) {
        p.identity = acc.tick.identity;
    }
    p.pid = acc.tick.pid;
    p.start_ticks = acc.tick.start_ticks;
    p.type = acc.tick.type;
    p.mem_used_mib = acc.tick.mem_used_mib;
    p.sm_util_pct = acc.sm_span > 0
                        ? std::optional<double>(acc.sm_weighted / static_cast<double>(acc.sm_span))
                        : acc.tick.sm_util_pct;
    p.active_us.reset();    // set by the caller when the process had an SM reading
    p.idle_held_us.reset(); // set by the caller for a holder on a measured card
}

} // namespace gua::sampler

// SPDX-License-Identifier: Apache-2.0
// Folding polls into card-ticks: utilization integrated over the measured time of each poll,
// unmeasured time, the card's readings, per-process active time on the poll grid. The held
// decision is in fold_held.cpp, the process index in fold_processes.cpp, the tick's end in
// fold_finish.cpp.
#include "sampler/fold.hpp"

#include "audit/classify.hpp"

#include <algorithm>
#include <cmath>
#include <unistd.h>

namespace gua::sampler {

TickBuilder::TickBuilder(const audit::Thresholds& thresholds, identity::Resolver& resolver)
    : m_thresholds(thresholds), m_resolver(resolver),
      m_ticks_per_s(std::max<long>(::sysconf(_SC_CLK_TCK), 1)) {}

void TickBuilder::start(TimeUs t0) {
    m_t0 = t0;
    m_span = 0;
    std::erase_if(m_cards, [](const auto& item) { return !item.second.present; });
    for (auto& [uuid, card] : m_cards) {
        card.reset();
    }
}

void TickBuilder::prime(const std::vector<telemetry::DevicePoll>& polls) {
    for (const telemetry::DevicePoll& poll : polls) {
        if (poll.lost) {
            continue;
        }
        CardAcc& card = m_cards[poll.uuid]; // not present: no card-tick unless polled again
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            if (f.fold == telemetry::Fold::counter && poll.readings.*f.value) {
                card.counters[static_cast<std::size_t>(f.field)].last = poll.readings.*f.value;
            }
        }
    }
}

void TickBuilder::add_poll(const std::vector<telemetry::DevicePoll>& polls, DurationUs span_us,
                           const std::unordered_map<std::string, telemetry::DeviceInfo>& devices,
                           const PollTimes& times) {
    m_span += span_us;
    m_times = &times;
    // A process that exited since the previous poll is noticed now, so a pid reused within the
    // tick resolves to its new process.
    m_resolver.notice_exits();
    for (const telemetry::DevicePoll& poll : polls) {
        CardAcc& card = m_cards[poll.uuid];
        card.present = true;
        if (auto it = devices.find(poll.uuid); it != devices.end()) {
            card.record.device = it->second;
        } else {
            card.record.device.uuid = poll.uuid;
        }
        take_over_stand_in(card);
        if (poll.lost) {
            card.lost = true; // the poll's span stays unmeasured
            continue;
        }
        const AllocationFold::Totals before{card.active, card.idle_held, card.idle_unlisted};
        add_card_poll(card, poll, span_us);
        if (m_allocations != nullptr) {
            card.allocation.add(m_t0 + m_span - span_us, m_t0 + m_span, before,
                                {card.active, card.idle_held, card.idle_unlisted});
        }
    }
}

void TickBuilder::take_over_stand_in(CardAcc& card) {
    // A card that opened in place of a stand-in polled earlier in this tick: one card-tick, the
    // card's, its time before the card opened unmeasured as the stand-in's was (GPU lost).
    const std::string& replaces = card.record.device.replaces;
    if (replaces.empty()) {
        return;
    }
    if (const auto it = m_cards.find(replaces); it != m_cards.end() && it->second.present) {
        card.lost = card.lost || it->second.lost;
        it->second.present = false;
    }
}

void TickBuilder::add_card_poll(CardAcc& card, const telemetry::DevicePoll& poll,
                                DurationUs span_us) {
    telemetry::CardTickRecord& r = card.record;
    r.read_errors += poll.read_errors;
    double weight_total = 0;
    for (const telemetry::UtilSample& s : poll.util) {
        weight_total += static_cast<double>(std::max<DurationUs>(s.weight_us, 0));
    }
    const auto unmeasured_weight = static_cast<double>(std::max<DurationUs>(poll.unmeasured_us, 0));
    card.partial =
        card.partial || unmeasured_weight > 0 || poll.util_source == telemetry::UtilSource::partial;
    // The samples and the unmeasured part together stand for the poll's real span. A poll without
    // any sample leaves its whole span unmeasured.
    double active = 0;
    double measured = 0;
    if (poll.util_source != telemetry::UtilSource::none && weight_total > 0) {
        const double scale = static_cast<double>(span_us) / (weight_total + unmeasured_weight);
        for (const telemetry::UtilSample& s : poll.util) {
            const double us = static_cast<double>(std::max<DurationUs>(s.weight_us, 0)) * scale;
            card.util_weighted += s.pct * us;
            card.buckets[static_cast<std::size_t>(audit::bucket_of(s.pct))] += us;
            if (s.pct >= m_thresholds.active_util_pct) {
                active += us;
            }
        }
        measured = weight_total * scale;
        card.measured += measured;
        if (poll.processes_unknown) {
            // Who was active is unknown too: the whole measured span is holders-unknown (flagged),
            // never active time of "(no process)". Its utilization still counts in the buckets.
            active = 0;
        }
        card.snapshot = card.snapshot || poll.util_source == telemetry::UtilSource::snapshot;
        ++card.measured_polls;
        r.util_samples += static_cast<std::uint32_t>(poll.util.size());
    }
    fold_readings(card, poll.readings, span_us);
    fold_ghost(r.readings, poll);
    attribute_active(card, poll, span_us, active);
    add_idle(card, poll, measured - active, span_us);
}

void TickBuilder::attribute_active(CardAcc& card, const telemetry::DevicePoll& poll,
                                   DurationUs span_us, double active) {
    double sm_total = 0;
    for (const telemetry::ProcessReading& p : poll.processes) {
        sm_total += std::max(p.sm_util_pct.value_or(0.0), 0.0);
    }
    // Each process's SM % is its mean since the previous poll: the poll's active time is split
    // by those shares (none attributed when no process had a reading). When the per-process read
    // failed, who was active is unknown: that time is flagged, never split by memory.
    double unknown_active = poll.process_util_unknown ? active : 0.0;
    const double active_per_pct =
        sm_total > 0 && !poll.process_util_unknown ? active / sm_total : 0.0;
    ++card.polls;
    m_poll_procs.clear();
    for (const telemetry::ProcessReading& p : poll.processes) {
        ProcAcc& acc = process_of(card, p);
        m_poll_procs.push_back(static_cast<std::size_t>(&acc - card.processes.data()));
        acc.listed_at = card.polls;
        acc.last_weight = weight_of(p);
        acc.last_mem_known = p.mem_used_mib.has_value();
        if (p.mem_used_mib) {
            acc.tick.mem_used_mib = std::max(acc.tick.mem_used_mib.value_or(0), *p.mem_used_mib);
        }
        if (p.sm_util_pct) {
            acc.has_sm = true;
            acc.sm_weighted += *p.sm_util_pct * static_cast<double>(span_us);
            acc.sm_span += span_us;
            const double share = std::max(*p.sm_util_pct, 0.0) * active_per_pct;
            // A process whose identity the resolver could not finish: its part is no one's.
            (acc.names_deferred ? unknown_active : acc.active) += share;
        }
    }
    card.active += active - unknown_active;
    card.idle_unknown += unknown_active;
}

void TickBuilder::fold_readings(CardAcc& card, const telemetry::CardReadings& poll,
                                DurationUs span_us) {
    telemetry::CardReadings& r = card.record.readings;
    if (const std::optional<std::int64_t>& events =
            poll.*telemetry::info(telemetry::k_clock_events_field).value) {
        // The poll's reading stands for its span (as every reading of the poll does).
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            if (f.fold == telemetry::Fold::event_time) {
                const bool set = (static_cast<std::uint64_t>(*events) & f.base_bit) != 0;
                r.*f.value =
                    (r.*f.value).value_or(0) + (set ? std::max<DurationUs>(span_us, 0) : 0);
            }
        }
    }
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        const std::optional<std::int64_t>& v = poll.*f.value;
        if (!v) {
            continue; // a poll without the reading: a counter's next reading covers its span
        }
        const auto i = static_cast<std::size_t>(f.field);
        switch (f.fold) {
        case telemetry::Fold::last:
            r.*f.value = v;
            break;
        case telemetry::Fold::bits:
            r.*f.value = (r.*f.value).value_or(0) | *v;
            break;
        case telemetry::Fold::counter: {
            CardAcc::Counter& c = card.counters[i];
            // A counter that went back (driver reloaded) has an unknown increase over this poll.
            if (c.last && *v >= *c.last) {
                c.increase += *v - *c.last;
                c.known = true;
            }
            c.last = v;
            break;
        }
        case telemetry::Fold::mean: {
            // The reading is the mean over the poll's span (a GPM metric between two samples).
            CardAcc::Mean& m = card.means[i];
            const DurationUs w = std::max<DurationUs>(span_us, 0);
            m.weighted += static_cast<double>(*v) * static_cast<double>(w);
            m.span += w;
            break;
        }
        case telemetry::Fold::event_time:
        case telemetry::Fold::derived:
            break;
        }
    }
}

void TickBuilder::fold_ghost(telemetry::CardReadings& r, const telemetry::DevicePoll& poll) {
    // Only where the driver's `used` leaves its own reservation out (MemoryInfo_v2, which says how
    // much it reserves) and every process's memory is known: used − what the processes hold. A
    // pid in several lists (compute and graphics) holds its memory once.
    const telemetry::CardReadings& p = poll.readings;
    if (!p.mem_used_mib || !p.mem_reserved_mib || poll.processes_unknown) {
        return;
    }
    std::int64_t listed = 0;
    const std::vector<telemetry::ProcessReading>& procs = poll.processes;
    for (std::size_t i = 0; i < procs.size(); ++i) {
        if (!procs[i].mem_used_mib) {
            return;
        }
        const auto same_pid = [&](const telemetry::ProcessReading& q) {
            return q.pid == procs[i].pid;
        };
        if (std::any_of(procs.begin(), procs.begin() + static_cast<std::ptrdiff_t>(i), same_pid)) {
            continue; // counted with its first entry
        }
        std::int64_t mib = *procs[i].mem_used_mib;
        for (std::size_t j = i + 1; j < procs.size(); ++j) {
            if (same_pid(procs[j])) {
                mib = std::max(mib, procs[j].mem_used_mib.value_or(0));
            }
        }
        listed += mib;
    }
    r.ghost_mib = std::max<std::int64_t>(*p.mem_used_mib - listed, 0);
}

TickBuilder::ProcAcc& TickBuilder::process_of(CardAcc& card,
                                              const telemetry::ProcessReading& reading) {
    if (reading.identity) { // synthetic: the owner is known, the start time is not
        ProcAcc* acc = card.find(reading.pid, reading.type, std::nullopt);
        if (acc == nullptr) {
            acc = &card.insert(reading.pid, reading.type, std::nullopt);
        }
        if (!acc->seen) {
            acc->seen = true;
            acc->fresh = true;
            acc->serial.reset();
            acc->tick.identity = *reading.identity;
        }
        acc->names_deferred = false;
        return *acc;
    }
    // Resolved at every poll: a pid reused since the previous poll has another start time and
    // becomes another process. A pid that vanished meanwhile (no start time) continues the entry
    // it had during this tick.
    const identity::ProcessFacts& facts = m_resolver.resolve(reading.pid);
    ProcAcc* acc = card.find(reading.pid, reading.type, facts.start_ticks);
    if (acc == nullptr && !facts.start_ticks) {
        if (ProcAcc* known = card.find_latest(reading.pid, reading.type)) {
            // The driver still lists a process that has just exited: it keeps its identity.
            if (!known->seen) {
                known->seen = true;
                known->fresh = false;
            }
            return *known;
        }
    }
    if (acc == nullptr) {
        acc = &card.insert(reading.pid, reading.type, facts.start_ticks);
    }
    acc->names_deferred = facts.names_deferred;
    if (!acc->seen) {
        // A process seen in the previous tick usually resolves to the same facts: nothing to copy.
        acc->seen = true;
        acc->fresh = acc->serial != facts.serial;
        if (acc->fresh) {
            acc->serial = facts.serial;
            acc->tick.identity = facts.identity;
        }
    }
    return *acc;
}

} // namespace gua::sampler

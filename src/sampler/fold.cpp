// SPDX-License-Identifier: Apache-2.0
// Folding polls into card-ticks: utilization integrated over the measured time of each poll,
// unmeasured time, idle time without holders, per-process active time on the poll grid, merged
// process lists keyed by (pid, type, start time).
#include "sampler/fold.hpp"

#include "audit/classify.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unistd.h>

namespace gua::sampler {

TickBuilder::TickBuilder(const audit::Thresholds& thresholds, identity::Resolver& resolver)
    : m_thresholds(thresholds), m_resolver(resolver),
      m_ticks_per_s(std::max<long>(::sysconf(_SC_CLK_TCK), 1)) {}

namespace {

using Start = std::optional<std::uint64_t>;

bool key_less(const telemetry::ProcessTick& a, std::uint32_t pid, telemetry::ProcessType type,
              Start start) {
    return std::tuple(a.pid, static_cast<int>(a.type), a.start_ticks) <
           std::tuple(pid, static_cast<int>(type), start);
}

bool key_is(const telemetry::ProcessTick& a, std::uint32_t pid, telemetry::ProcessType type,
            Start start) {
    return a.pid == pid && a.type == type && a.start_ticks == start;
}

/// Rounds `x` µs to an integer in [0, limit].
DurationUs round_within(double x, DurationUs limit) {
    return std::clamp<DurationUs>(std::llround(x), 0, std::max<DurationUs>(limit, 0));
}

} // namespace

void TickBuilder::CardAcc::reset() {
    telemetry::DeviceInfo device = std::move(record.device);
    record = telemetry::CardTickRecord{};
    record.device = std::move(device);
    measured = 0;
    util_weighted = 0;
    active = 0;
    idle_unlisted = 0;
    idle_unknown = 0;
    idle_held = 0;
    buckets = {};
    measured_polls = 0;
    for (Counter& c : counters) {
        c.increase = 0;
        c.known = false;
    }
    means = {};
    lost = false;
    partial = false;
    snapshot = false;
    present = false;
    drop_unseen();
    for (std::size_t i = 0; i < live; ++i) {
        ProcAcc& acc = processes[i];
        acc.seen = false;
        acc.tick.mem_used_mib.reset();
        acc.tick.sm_util_pct.reset();
        acc.sm_weighted = 0;
        acc.sm_span = 0;
        acc.active = 0;
        acc.idle_held = 0;
        acc.has_sm = false;
    }
    hint = 0;
    allocation.clear();
}

void TickBuilder::CardAcc::drop_unseen() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live; ++i) {
        if (processes[i].seen) {
            if (kept != i) {
                std::swap(processes[kept], processes[i]);
            }
            ++kept;
        }
    }
    if (kept == live) {
        return;
    }
    live = kept;
    order.resize(live);
    for (std::size_t i = 0; i < live; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const telemetry::ProcessTick& x = processes[b].tick;
        return key_less(processes[a].tick, x.pid, x.type, x.start_ticks);
    });
}

std::vector<std::uint32_t>::iterator
TickBuilder::CardAcc::position(std::uint32_t pid, telemetry::ProcessType type, Start start) {
    return std::lower_bound(order.begin(), order.end(), 0U, [&](std::uint32_t i, auto) {
        return key_less(processes[i].tick, pid, type, start);
    });
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find(std::uint32_t pid, telemetry::ProcessType type,
                                                 Start start) {
    // Drivers list processes in the same order poll after poll: try the one after the last match.
    if (hint < order.size()) {
        ProcAcc& next = processes[order[hint]];
        if (key_is(next.tick, pid, type, start)) {
            ++hint;
            return &next;
        }
    }
    const auto it = position(pid, type, start);
    hint = static_cast<std::size_t>(it - order.begin()) + 1;
    if (it != order.end() && key_is(processes[*it].tick, pid, type, start)) {
        return &processes[*it];
    }
    return nullptr;
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find_latest(std::uint32_t pid,
                                                        telemetry::ProcessType type) {
    ProcAcc* latest = nullptr;
    for (auto it = position(pid, type, std::nullopt); it != order.end(); ++it) {
        ProcAcc& acc = processes[*it];
        if (acc.tick.pid != pid || acc.tick.type != type) {
            break;
        }
        latest = &acc;
    }
    return latest;
}

TickBuilder::ProcAcc& TickBuilder::CardAcc::insert(std::uint32_t pid, telemetry::ProcessType type,
                                                   Start start) {
    if (live == processes.size()) {
        processes.emplace_back();
    }
    ProcAcc& acc = processes[live];
    acc.tick.pid = pid;
    acc.tick.type = type;
    acc.tick.start_ticks = start;
    acc.tick.mem_used_mib.reset();
    acc.tick.sm_util_pct.reset();
    acc.sm_weighted = 0;
    acc.sm_span = 0;
    acc.active = 0;
    acc.idle_held = 0;
    acc.has_sm = false;
    acc.seen = false;
    acc.names_deferred = false;
    acc.listed_at = 0;
    acc.last_weight = 0;
    acc.last_mem_known = false;
    acc.serial.reset();
    order.insert(position(pid, type, start), static_cast<std::uint32_t>(live));
    ++live;
    return acc;
}

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
    add_idle(card, poll, measured - active, span_us);
}

void TickBuilder::add_idle(CardAcc& card, const telemetry::DevicePoll& poll, double idle_us,
                           DurationUs span_us) {
    // The poll's measured time below the threshold, decided from what is held during this poll
    // alone (docs/measurement.md): holders unknown; not held (no holder listed, or the holders
    // listed together hold no more than held_mib); or idle-held, split among the holders by the
    // memory each holds at this poll. A holder that started or exited inside the span holds only
    // from its start or until its exit: the span is decided piece by piece between those
    // instants, its idle time spread evenly over it.
    if (idle_us <= 0) {
        return;
    }
    if (poll.processes_unknown) {
        card.idle_unknown += idle_us;
        return;
    }
    if (!changes_inside(card, poll, span_us)) {
        decide_listed(card, poll, idle_us); // the usual case, in one pass
        return;
    }
    collect_holders(card, poll, span_us);
    const auto span = static_cast<double>(std::max<DurationUs>(span_us, 1));
    m_cuts.clear();
    for (const Segment& h : m_segments) {
        if (h.from > 0) {
            m_cuts.push_back(h.from);
        }
        if (h.to < span) {
            m_cuts.push_back(h.to);
        }
    }
    if (m_cuts.empty()) {
        decide(card, idle_us, 0, span);
        return;
    }
    m_cuts.push_back(0);
    m_cuts.push_back(span);
    std::sort(m_cuts.begin(), m_cuts.end());
    for (std::size_t i = 1; i < m_cuts.size(); ++i) {
        if (m_cuts[i] > m_cuts[i - 1]) {
            decide(card, idle_us * (m_cuts[i] - m_cuts[i - 1]) / span, m_cuts[i - 1], m_cuts[i]);
        }
    }
}

bool TickBuilder::changes_inside(const CardAcc& card, const telemetry::DevicePoll& poll,
                                 DurationUs span_us) const {
    if (!m_times->exits.empty()) {
        return true;
    }
    if (!m_times->boot_offset_us) {
        return false;
    }
    // A start time in clock ticks after the span's start (rounded down) may fall inside it;
    // collect_holders() places it exactly.
    const std::int64_t begin_ticks = (m_times->end_mono_us - span_us + *m_times->boot_offset_us) *
                                     m_ticks_per_s / k_us_per_second;
    for (std::size_t i = 0; i < poll.processes.size(); ++i) {
        const Start& start = card.processes[m_poll_procs[i]].tick.start_ticks;
        if (start && static_cast<std::int64_t>(*start) >= begin_ticks &&
            is_holder_type(poll.processes[i].type)) {
            return true;
        }
    }
    return false;
}

void TickBuilder::decide_listed(CardAcc& card, const telemetry::DevicePoll& poll, double idle_us) {
    std::int64_t held = 0;
    std::size_t holders = 0;
    bool unknown_mem = false;
    for (const telemetry::ProcessReading& p : poll.processes) {
        if (is_holder_type(p.type)) {
            ++holders;
            unknown_mem = unknown_mem || !p.mem_used_mib;
            held += weight_of(p);
        }
    }
    if (holders == 0 || (!unknown_mem && held <= m_thresholds.held_mib)) {
        card.idle_unlisted += idle_us;
        return;
    }
    const double per_mib = held > 0 ? idle_us / static_cast<double>(held) : 0.0;
    double deferred = 0;
    for (std::size_t i = 0; i < poll.processes.size(); ++i) {
        const telemetry::ProcessReading& p = poll.processes[i];
        if (!is_holder_type(p.type)) {
            continue;
        }
        ProcAcc& acc = card.processes[m_poll_procs[i]];
        const double share = held > 0 ? static_cast<double>(weight_of(p)) * per_mib
                                      : idle_us / static_cast<double>(holders);
        (acc.names_deferred ? deferred : acc.idle_held) += share;
    }
    card.idle_held += idle_us - deferred;
    card.idle_unknown += deferred; // who holds it is not known yet: flagged
}

void TickBuilder::collect_holders(CardAcc& card, const telemetry::DevicePoll& poll,
                                  DurationUs span_us) {
    m_segments.clear();
    const auto span = static_cast<double>(std::max<DurationUs>(span_us, 1));
    const std::int64_t begin = m_times->end_mono_us - span_us;
    for (std::size_t i = 0; i < poll.processes.size(); ++i) {
        const telemetry::ProcessReading& p = poll.processes[i];
        if (!is_holder_type(p.type)) {
            continue;
        }
        const ProcAcc& acc = card.processes[m_poll_procs[i]];
        double from = 0;
        if (m_times->boot_offset_us && acc.tick.start_ticks) {
            // /proc start times count clock ticks since boot (truncated: at most one tick early).
            const std::int64_t started =
                static_cast<std::int64_t>(*acc.tick.start_ticks) * k_us_per_second / m_ticks_per_s -
                *m_times->boot_offset_us;
            if (started > begin && started <= m_times->end_mono_us) {
                from = static_cast<double>(started - begin);
            }
        }
        m_segments.push_back({m_poll_procs[i], weight_of(p), p.mem_used_mib.has_value(),
                              acc.names_deferred, from, span});
    }
    for (const ProcessExit& e : m_times->exits) {
        // A holder listed at the card's previous poll that exited inside this span held its
        // memory of then until its exit.
        const double to = std::min(static_cast<double>(e.mono_us - begin), span);
        if (to <= 0) {
            continue;
        }
        for (const auto type : {telemetry::ProcessType::compute, telemetry::ProcessType::mps,
                                telemetry::ProcessType::graphics}) {
            ProcAcc* acc = is_holder_type(type) ? card.find(e.pid, type, e.start_ticks) : nullptr;
            if (acc == nullptr || acc->listed_at + 1 != card.polls) {
                continue;
            }
            if (!acc->seen) { // listed last in the previous tick: it is part of this one too
                acc->seen = true;
                acc->fresh = false;
            }
            if (acc->last_mem_known) {
                acc->tick.mem_used_mib =
                    std::max(acc->tick.mem_used_mib.value_or(0), acc->last_weight);
            }
            m_segments.push_back({static_cast<std::size_t>(acc - card.processes.data()),
                                  acc->last_weight, acc->last_mem_known, acc->names_deferred, 0,
                                  to});
        }
    }
}

void TickBuilder::decide(CardAcc& card, double idle_us, double a, double b) {
    std::int64_t held = 0;
    std::size_t holders = 0;
    bool unknown_mem = false;
    const auto alive = [&](const Segment& h) { return h.from <= a && h.to >= b; };
    for (const Segment& h : m_segments) {
        if (alive(h)) {
            ++holders;
            unknown_mem = unknown_mem || !h.mem_known;
            held += h.weight;
        }
    }
    if (holders == 0 || (!unknown_mem && held <= m_thresholds.held_mib)) {
        card.idle_unlisted += idle_us;
        return;
    }
    const double per_mib = held > 0 ? idle_us / static_cast<double>(held) : 0.0;
    for (const Segment& h : m_segments) {
        if (!alive(h)) {
            continue;
        }
        const double share = held > 0 ? static_cast<double>(h.weight) * per_mib
                                      : idle_us / static_cast<double>(holders);
        if (h.deferred) {
            card.idle_unknown += share; // who holds it is not known yet: flagged
        } else {
            card.idle_held += share;
            card.processes[h.index].idle_held += share;
        }
    }
}

bool TickBuilder::is_holder_type(telemetry::ProcessType type) const {
    return type != telemetry::ProcessType::graphics || m_thresholds.graphics_is_holder;
}

std::int64_t TickBuilder::weight_of(const telemetry::ProcessReading& p) const {
    // As the audit weighs memory: unknown memory counts as the held threshold.
    return std::max<std::int64_t>(p.mem_used_mib.value_or(m_thresholds.held_mib), 0);
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
        if (m_allocations != nullptr) {
            const std::string& id = card.record.device.uuid;
            card.allocation.finish(
                *m_allocations,
                card_query(card.record.device,
                           m_device_source ? m_device_source->gpu_instance_of(id) : std::nullopt),
                m_t0, m_span, card.record);
        }
        const telemetry::CardTickRecord& r = card.record;
        if (tick.cards.size() == n) {
            tick.cards.emplace_back();
        }
        telemetry::CardTickRecord& out = tick.cards[n++];
        const bool same_card = same_tick && out.device.uuid == r.device.uuid;
        // Copy-assignments below reuse the storage of the previous tick's records.
        std::vector<telemetry::ProcessTick> processes = std::move(out.processes);
        out = r;
        out.processes = std::move(processes);
        // Per-process active time: cumulative rounding keeps each within 1 µs of its share and
        // the sum within the card's active time.
        const DurationUs card_active = r.active_us.value_or(0);
        double cumulative = 0;
        DurationUs attributed = 0;
        // Per-process idle-held time: the same cumulative rounding, scaled so that the parts add
        // up exactly to the card's idle-held time (its measured idle time neither unlisted nor of
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
            // This card's entry of the previous tick for the same process holds its identity
            // already, unless that changed during this tick.
            if (!same_card || acc.fresh ||
                !key_is(p, acc.tick.pid, acc.tick.type, acc.tick.start_ticks)) {
                p.identity = acc.tick.identity;
            }
            p.pid = acc.tick.pid;
            p.start_ticks = acc.tick.start_ticks;
            p.type = acc.tick.type;
            p.mem_used_mib = acc.tick.mem_used_mib;
            p.sm_util_pct =
                acc.sm_span > 0
                    ? std::optional<double>(acc.sm_weighted / static_cast<double>(acc.sm_span))
                    : acc.tick.sm_util_pct;
            p.active_us.reset();
            if (acc.has_sm) {
                cumulative += acc.active;
                const DurationUs upto = round_within(cumulative, card_active);
                p.active_us = upto - attributed;
                attributed = upto;
            }
            p.idle_held_us.reset();
            if (r.active_us && is_holder_type(acc.tick.type)) {
                held_cumulative += acc.idle_held * held_scale;
                const DurationUs upto = round_within(held_cumulative, card_held);
                p.idle_held_us = upto - held_attributed;
                held_attributed = upto;
            }
        }
        out.processes.resize(m);
    }
    tick.cards.resize(n);
    std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
        return a.device.index != b.device.index ? a.device.index < b.device.index
                                                : a.device.uuid < b.device.uuid;
    });
}

} // namespace gua::sampler

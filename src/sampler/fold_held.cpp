// SPDX-License-Identifier: Apache-2.0
// The held decision of TickBuilder: a poll's idle time is idle-held or not held from the memory
// its holders hold together during the poll, piece by piece between the starts and exits inside
// its span, and split among those holders (docs/measurement.md).
#include "sampler/fold.hpp"
#include "sampler/fold_detail.hpp"

#include <algorithm>

namespace gua::sampler {

using fold_detail::Start;

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

} // namespace gua::sampler

// SPDX-License-Identifier: Apache-2.0
// Timeline: readings of one source → per-card segments over a span.
#include "alloc/timeline.hpp"

#include <algorithm>
#include <tuple>

namespace gua::alloc {
namespace {

bool allocation_less(const Allocation& a, const Allocation& b) {
    return std::tie(a.kind, a.id, a.user, a.account) < std::tie(b.kind, b.id, b.user, b.account);
}

Segment unknown_segment(TimeUs begin, TimeUs end, std::string reason) {
    Segment segment;
    segment.begin = begin;
    segment.end = end;
    segment.state = AllocationState::unknown;
    segment.reason = std::move(reason);
    return segment;
}

} // namespace

Segment card_state(const Snapshot& snapshot, const CardQuery& card) {
    Segment segment;
    if (!snapshot.readable) {
        segment.reason = snapshot.error;
        return segment;
    }
    for (const auto& [device, allocation] : snapshot.entries) {
        if (card.matches(device)) {
            segment.allocations.push_back(allocation);
        }
    }
    std::sort(segment.allocations.begin(), segment.allocations.end(), allocation_less);
    segment.allocations.erase(std::unique(segment.allocations.begin(), segment.allocations.end()),
                              segment.allocations.end());
    if (!segment.allocations.empty()) {
        segment.state = AllocationState::allocated;
        return segment;
    }
    for (const auto& [device, reason] : snapshot.unknown) {
        if (card.matches(device)) {
            segment.reason = reason;
            return segment;
        }
    }
    segment.state = AllocationState::unallocated;
    return segment;
}

void append_merged(std::vector<Segment>& out, Segment segment) {
    if (segment.begin >= segment.end) {
        return;
    }
    if (!out.empty()) {
        Segment& last = out.back();
        if (last.end == segment.begin && last.state == segment.state &&
            last.allocations == segment.allocations && last.reason == segment.reason) {
            last.end = segment.end;
            return;
        }
    }
    out.push_back(std::move(segment));
}

void Timeline::record(TimeUs at, Snapshot snapshot) {
    if (!m_readings.empty() && at < m_readings.back().at) {
        at = m_readings.back().at; // the wall clock stepped back: keep the order
    }
    if (m_readings.empty() || !(m_readings.back().snapshot == snapshot)) {
        m_readings.push_back({at, std::move(snapshot)});
    }
    m_confirmed_until = std::max(m_confirmed_until, at);
    forget_before(at - k_max_history_us); // bounded even when nobody asks
}

void Timeline::confirm(TimeUs at) {
    if (!m_readings.empty()) {
        m_confirmed_until = std::max(m_confirmed_until, at);
    }
}

std::vector<Segment> Timeline::query(const CardQuery& card, TimeUs begin, TimeUs end) const {
    std::vector<Segment> out;
    if (m_readings.empty() || begin >= end) {
        append_merged(out, unknown_segment(begin, end, "no reading yet"));
        return out;
    }
    append_merged(out,
                  unknown_segment(begin, std::min(end, m_readings.front().at), "no reading yet"));
    const TimeUs valid_until = m_confirmed_until + m_grace_us;
    for (std::size_t i = 0; i < m_readings.size(); ++i) {
        const TimeUs from = std::max(begin, m_readings[i].at);
        TimeUs to = i + 1 < m_readings.size() ? m_readings[i + 1].at : valid_until;
        to = std::min(to, end);
        if (from >= to) {
            continue;
        }
        Segment segment = card_state(m_readings[i].snapshot, card);
        segment.begin = from;
        segment.end = to;
        append_merged(out, std::move(segment));
    }
    append_merged(out, unknown_segment(std::max(begin, valid_until), end, "source stalled"));
    return out;
}

void Timeline::forget_before(TimeUs before) {
    std::size_t keep_from = 0;
    while (keep_from + 1 < m_readings.size() && m_readings[keep_from + 1].at <= before) {
        ++keep_from;
    }
    m_readings.erase(m_readings.begin(),
                     m_readings.begin() + static_cast<std::ptrdiff_t>(keep_from));
}

} // namespace gua::alloc

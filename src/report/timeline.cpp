// SPDX-License-Identifier: Apache-2.0
// TimelineGrid: bucket width choice, span placement and joining, and the spans of a card.
#include "report/timeline.hpp"

#include "store/card_hours.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

namespace gua::report {

namespace {

constexpr DurationUs k_week_us = 7 * k_us_per_day;

constexpr std::array<DurationUs, 17> k_widths{k_us_per_minute,
                                              2 * k_us_per_minute,
                                              5 * k_us_per_minute,
                                              10 * k_us_per_minute,
                                              15 * k_us_per_minute,
                                              30 * k_us_per_minute,
                                              k_us_per_hour,
                                              2 * k_us_per_hour,
                                              3 * k_us_per_hour,
                                              4 * k_us_per_hour,
                                              6 * k_us_per_hour,
                                              8 * k_us_per_hour,
                                              12 * k_us_per_hour,
                                              k_us_per_day,
                                              2 * k_us_per_day,
                                              3 * k_us_per_day,
                                              k_week_us};

TimeUs floor_to(TimeUs t, DurationUs width) {
    const TimeUs q = t / width - (t % width < 0 ? 1 : 0);
    return q * width;
}

/// Buckets of `width` that cover [from, to) when aligned to multiples of it.
std::size_t buckets_for(TimeUs from, TimeUs to, DurationUs width) {
    const TimeUs start = floor_to(from, width);
    return static_cast<std::size_t>((to - start + width - 1) / width);
}

/// The part of `s` that falls in `part_us` of `whole_us` (each state rounded on its own).
audit::StateTimes share_of(const audit::StateTimes& s, DurationUs part_us, DurationUs whole_us) {
    const double f = static_cast<double>(part_us) / static_cast<double>(whole_us);
    const auto part = [f](DurationUs v) {
        return static_cast<DurationUs>(std::llround(static_cast<double>(v) * f));
    };
    return audit::StateTimes{part(s.active),     part(s.idle_held),        part(s.truly_idle),
                             part(s.unmeasured), part(s.allocated_unused), part(s.lost_to_faults)};
}

} // namespace

TimelineGrid::TimelineGrid(TimeUs from, TimeUs to, std::size_t max_buckets)
    : m_from(from), m_to(std::max(to, from + 1)) {
    max_buckets = std::max<std::size_t>(max_buckets, 1);
    m_width = 0;
    for (const DurationUs w : k_widths) {
        if (buckets_for(m_from, m_to, w) <= max_buckets) {
            m_width = w;
            break;
        }
    }
    for (DurationUs weeks = 2; m_width == 0; weeks *= 2) {
        if (buckets_for(m_from, m_to, weeks * k_week_us) <= max_buckets) {
            m_width = weeks * k_week_us;
        }
    }
    m_start = floor_to(m_from, m_width);
    m_count = buckets_for(m_from, m_to, m_width);
}

TimelineGrid::Card& TimelineGrid::card(std::uint32_t gpu) {
    if (m_cards.size() <= gpu) {
        m_cards.resize(gpu + 1);
    }
    Card& c = m_cards[gpu];
    if (c.states.empty()) {
        c.states.resize(m_count);
        c.head.resize(m_count);
        for (std::size_t b = 0; b < m_count; ++b) {
            c.head[b] = static_cast<std::uint32_t>(b);
        }
    }
    return c;
}

std::size_t TimelineGrid::bucket_of(TimeUs t) const {
    if (t <= m_start) {
        return 0;
    }
    return std::min(static_cast<std::size_t>((t - m_start) / m_width), m_count - 1);
}

void TimelineGrid::join(Card& c, std::size_t first, std::size_t last) const {
    const std::uint32_t head = c.head[first];
    while (last + 1 < m_count && c.head[last + 1] == c.head[last]) {
        ++last; // the whole of the span that `last` belongs to
    }
    for (std::size_t b = head; b <= last; ++b) {
        if (c.head[b] == b && b != head) {
            c.states[head] += c.states[b];
            c.states[b] = audit::StateTimes{};
        }
        c.head[b] = head;
    }
}

void TimelineGrid::add(std::uint32_t gpu, TimeUs from, TimeUs to, const audit::StateTimes& states) {
    Card& c = card(gpu);
    const std::size_t first = bucket_of(from);
    const std::size_t last = bucket_of(std::max(from, to - 1));
    if (c.head[first] == c.head[last]) {
        c.states[c.head[first]] += states;
        return;
    }
    const DurationUs length = to - from;
    if (length > m_width || last != first + 1) {
        join(c, first, last);
        c.states[c.head[first]] += states;
        return;
    }
    // A card-tick across a bucket boundary: each bucket gets its part of the tick.
    const TimeUs boundary = m_start + static_cast<TimeUs>(last) * m_width;
    const audit::StateTimes before = share_of(states, boundary - from, length);
    audit::StateTimes after = states;
    after.active -= before.active;
    after.idle_held -= before.idle_held;
    after.truly_idle -= before.truly_idle;
    after.unmeasured -= before.unmeasured;
    after.allocated_unused -= before.allocated_unused;
    after.lost_to_faults -= before.lost_to_faults;
    c.states[c.head[first]] += before;
    c.states[c.head[last]] += after;
}

std::vector<TimelineSpan> TimelineGrid::spans(std::uint32_t gpu) const {
    std::vector<TimelineSpan> out;
    if (gpu >= m_cards.size() || m_cards[gpu].states.empty()) {
        return out;
    }
    const Card& c = m_cards[gpu];
    for (std::size_t b = 0; b < m_count;) {
        std::size_t end = b + 1;
        while (end < m_count && c.head[end] == b) {
            ++end;
        }
        const audit::StateTimes& s = c.states[b];
        if (s.total() != 0) {
            const TimeUs from = m_start + static_cast<TimeUs>(b) * m_width;
            const TimeUs to = m_start + static_cast<TimeUs>(end) * m_width;
            out.push_back(TimelineSpan{std::max(from, m_from), std::min(to, m_to),
                                       to_hours(s.active), to_hours(s.idle_held),
                                       to_hours(s.truly_idle), to_hours(s.unmeasured),
                                       to_hours(s.allocated_unused)});
        }
        b = end;
    }
    return out;
}

void add_coarse_spans(store::Database& db, const std::vector<CoarseSpan>& coarse,
                      TimelineGrid& grid) {
    if (coarse.empty()) {
        return;
    }
    const auto hour_of = [](TimeUs t) {
        return t / k_us_per_hour - (t % k_us_per_hour < 0 ? 1 : 0);
    };
    std::int64_t first = hour_of(coarse.front().from);
    std::int64_t end = hour_of(coarse.front().to - 1) + 1;
    for (const CoarseSpan& c : coarse) {
        first = std::min(first, hour_of(c.from));
        end = std::max(end, hour_of(c.to - 1) + 1);
    }
    std::map<std::pair<std::int64_t, std::int64_t>, audit::StateTimes> hours; // (gpu, hour)
    for (const store::CardHour& h : store::read_card_hours(db, first, end)) {
        hours.emplace(std::pair{h.gpu_id, h.hour}, h.states);
    }
    for (const CoarseSpan& c : coarse) {
        const auto gpu = static_cast<std::int64_t>(c.gpu);
        const auto begin = hours.lower_bound({gpu, hour_of(c.from)});
        const auto stop = hours.lower_bound({gpu, hour_of(c.to - 1) + 1});
        audit::StateTimes sum;
        for (auto it = begin; it != stop; ++it) {
            sum += it->second;
        }
        const bool exact = sum.active == c.states.active && sum.idle_held == c.states.idle_held &&
                           sum.truly_idle == c.states.truly_idle &&
                           sum.unmeasured == c.states.unmeasured;
        if (!exact) {
            grid.add(c.gpu, c.from, c.to, c.states);
            continue;
        }
        for (auto it = begin; it != stop; ++it) {
            const TimeUs start = it->first.second * k_us_per_hour;
            grid.add(c.gpu, start, start + k_us_per_hour, it->second);
        }
    }
}

} // namespace gua::report

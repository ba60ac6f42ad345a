// SPDX-License-Identifier: Apache-2.0
// Timeline: the time-stamped readings of one source and the per-card segments they imply.
#pragma once

#include "alloc/allocation.hpp"

#include <vector>

namespace gua::alloc {

/// How far back a timeline answers at most: readings older than this are dropped as new ones
/// arrive (the consumer asks about its last poll spans, seconds old).
inline constexpr DurationUs k_max_history_us = k_us_per_hour;

/// Readings in time order. Not thread-safe: the owning source locks around it.
class Timeline {
  public:
    /// `grace_us`: how long after the last reading or confirmation the last state still holds;
    /// later time is unknown ("stalled").
    explicit Timeline(DurationUs grace_us) : m_grace_us(grace_us) {}

    /// Records the reading taken at `at` (not before the last one). An unchanged reading only
    /// confirms the state up to `at`.
    void record(TimeUs at, Snapshot snapshot);
    /// Confirms that the last reading still held at `at` (the source checked and saw no change).
    void confirm(TimeUs at);
    /// The card's segments covering [begin, end) exactly, adjacent equal ones merged.
    std::vector<Segment> query(const CardQuery& card, TimeUs begin, TimeUs end) const;
    /// Drops readings that ended before `before`, keeping the one in effect at `before`.
    void forget_before(TimeUs before);
    /// The number of readings kept (for tests and the benchmark).
    std::size_t size() const { return m_readings.size(); }

  private:
    struct Reading {
        TimeUs at;
        Snapshot snapshot;
    };
    std::vector<Reading> m_readings;
    TimeUs m_confirmed_until = 0;
    DurationUs m_grace_us;
};

/// The state of `card` in one snapshot, with its allocations sorted by (kind, id) and
/// de-duplicated, or the reason it is unknown.
Segment card_state(const Snapshot& snapshot, const CardQuery& card);

/// Appends `segment` to `out`, merging it into the last one when they touch and agree.
void append_merged(std::vector<Segment>& out, Segment segment);

} // namespace gua::alloc

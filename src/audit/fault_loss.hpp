// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults: the spans after a hardware, driver or interconnect fault during
// which a card stayed idle and held, and the part of a card-tick's idle-held time they take.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace gua::audit {

/// A span [from, to) of one card's time lost to a fault.
struct FaultSpan {
    TimeUs from = 0;
    TimeUs to = 0;
    friend bool operator==(const FaultSpan&, const FaultSpan&) = default;
};

/// The lost spans of every card (by the caller's GPU index), each card's sorted and disjoint.
class FaultSpans {
  public:
    /// Adds [from, to) to card `gpu`, merging it with the spans it touches.
    void add(std::uint32_t gpu, TimeUs from, TimeUs to);
    /// The time of [a, b) on card `gpu` that lies in its lost spans.
    DurationUs overlap(std::uint32_t gpu, TimeUs a, TimeUs b) const;
    /// True when any card's span meets [a, b).
    bool any_in(TimeUs a, TimeUs b) const;
    bool empty() const { return m_spans.empty(); }
    const std::map<std::uint32_t, std::vector<FaultSpan>>& spans() const { return m_spans; }

  private:
    std::map<std::uint32_t, std::vector<FaultSpan>> m_spans;
};

/// What the span rule needs of one card-tick: its time and whether the card was stuck in it
/// (no active time, some idle-held time).
struct TickState {
    TimeUs t0 = 0;
    TimeUs end = 0;
    bool stuck = false;
};

/// True when a fault of code `xid` leaves the card's holders stuck on a broken card: the
/// catalog's hardware, driver and interconnect classes. Application faults (13, 31, 43, …),
/// informational and unknown codes, and gua's own missing-GPU code stay the user's.
bool strands_card(int xid);

/// The tick state of `tick` as classify() sees it (before any fault moves its time).
TickState tick_state(const CardTick& tick, const Thresholds& thresholds);

/// The span a fault at `at` opens on a card whose ticks (any order) are `ticks`: from `at` to
/// the end of the tick holding `at`, then on through each later tick while the card stays
/// stuck and no gap longer than max(2 × the tick, 1 min) breaks the recording; it ends at the
/// start of the first tick with active time or without idle-held time (the card is busy again,
/// its holders left, or it was lost and is unmeasured). Empty (from == to) when no tick holds
/// or follows `at`.
FaultSpan fault_span(TimeUs at, std::vector<TickState> ticks);

/// fault_span() over `ticks` sorted by start, and whether the span is closed: a tick after it
/// ended it (busy again, released, or after a gap), so that ticks further on cannot extend it.
struct FaultSpanEnd {
    FaultSpan span;
    bool closed = false;
};
FaultSpanEnd fault_span_sorted(TimeUs at, std::span<const TickState> ticks);

/// Moves the part of `states.idle_held` that falls in `lost_us` of the tick's `duration_us`
/// (pro rata, rounded to the microsecond) to `states.lost_to_faults`; the total is unchanged.
void take_lost_to_faults(StateTimes& states, DurationUs lost_us, DurationUs duration_us);

} // namespace gua::audit

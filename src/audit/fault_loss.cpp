// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults (docs/faults.md, "Lost to faults"): pure interval arithmetic.
#include "audit/fault_loss.hpp"

#include "faults/catalog.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

namespace {

/// The longest break between two ticks that still continues a lost span (the window
/// accumulator's gap rule).
DurationUs span_gap(DurationUs duration_us) {
    return std::max<DurationUs>(2 * duration_us, k_us_per_minute);
}

} // namespace

void FaultSpans::add(std::uint32_t gpu, TimeUs from, TimeUs to) {
    if (to <= from) {
        return;
    }
    std::vector<FaultSpan>& spans = m_spans[gpu];
    FaultSpan merged{from, to};
    std::vector<FaultSpan> kept;
    kept.reserve(spans.size() + 1);
    for (const FaultSpan& s : spans) {
        if (s.to < merged.from || s.from > merged.to) {
            kept.push_back(s);
        } else {
            merged.from = std::min(merged.from, s.from);
            merged.to = std::max(merged.to, s.to);
        }
    }
    kept.push_back(merged);
    std::sort(kept.begin(), kept.end(),
              [](const FaultSpan& a, const FaultSpan& b) { return a.from < b.from; });
    spans = std::move(kept);
}

DurationUs FaultSpans::overlap(std::uint32_t gpu, TimeUs a, TimeUs b) const {
    const auto it = m_spans.find(gpu);
    if (it == m_spans.end()) {
        return 0;
    }
    DurationUs sum = 0;
    for (const FaultSpan& s : it->second) {
        sum += std::max<DurationUs>(0, std::min(b, s.to) - std::max(a, s.from));
    }
    return sum;
}

bool FaultSpans::any_in(TimeUs a, TimeUs b) const {
    return std::any_of(m_spans.begin(), m_spans.end(), [&](const auto& card) {
        return std::any_of(card.second.begin(), card.second.end(),
                           [&](const FaultSpan& s) { return s.from < b && s.to > a; });
    });
}

bool strands_card(int xid) {
    if (xid == faults::k_gpu_missing_code) {
        return false;
    }
    const faults::FaultClass c = faults::xid_info(xid).whose;
    return c == faults::FaultClass::hardware || c == faults::FaultClass::driver ||
           c == faults::FaultClass::interconnect;
}

TickState tick_state(const CardTick& tick, const Thresholds& thresholds) {
    const StateTimes s = classify(tick, thresholds);
    return TickState{tick.t0, tick.t0 + std::max<DurationUs>(tick.duration_us, 0),
                     s.active == 0 && s.idle_held > 0};
}

FaultSpan fault_span(TimeUs at, std::vector<TickState> ticks) {
    std::sort(ticks.begin(), ticks.end(),
              [](const TickState& a, const TickState& b) { return a.t0 < b.t0; });
    return fault_span_sorted(at, ticks).span;
}

FaultSpanEnd fault_span_sorted(TimeUs at, std::span<const TickState> ticks) {
    TimeUs cursor = at;
    for (const TickState& t : ticks) {
        if (t.end <= cursor) {
            continue; // before the fault, or covered already
        }
        if (t.t0 <= at) {
            cursor = t.end; // the tick the fault came in: lost from the fault on
            continue;
        }
        if (t.t0 - cursor > span_gap(t.end - t.t0) || !t.stuck) {
            return FaultSpanEnd{FaultSpan{at, cursor}, true};
        }
        cursor = t.end;
    }
    return FaultSpanEnd{FaultSpan{at, cursor}, false};
}

void take_lost_to_faults(StateTimes& states, DurationUs lost_us, DurationUs duration_us) {
    if (lost_us <= 0 || duration_us <= 0 || states.idle_held <= 0) {
        return;
    }
    const double f = std::min(1.0, static_cast<double>(lost_us) / static_cast<double>(duration_us));
    const DurationUs lost = std::clamp<DurationUs>(
        std::llround(static_cast<double>(states.idle_held) * f), 0, states.idle_held);
    states.idle_held -= lost;
    states.lost_to_faults += lost;
}

} // namespace gua::audit

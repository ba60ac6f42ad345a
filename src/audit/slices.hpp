// SPDX-License-Identifier: Apache-2.0
// A card's recent card-ticks cut into equal time slices, each named by the state that took most of
// it: the per-GPU history line of `gua top` and the `recent_states` of `gua now --format json`.
#pragma once

#include "audit/classify.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace gua::audit {

/// One card-tick's classified time over [t0, t0 + duration_us).
struct StateSpan {
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    StateTimes times; ///< adds up to duration_us (audit::classify)
};

/// What one slice shows: the four states of card-time, or no card-tick at all.
enum class SliceState : std::uint8_t { active, idle_held, truly_idle, unmeasured, no_data };

/// One slice [start, end) of a card's recent past.
struct StateSlice {
    TimeUs start = 0;
    TimeUs end = 0;
    StateTimes times;                       ///< the part of each overlapping span inside it
    DurationUs no_data_us = 0;              ///< time no span covers
    SliceState state = SliceState::no_data; ///< the largest of the five times
};

/// Cuts [from, to) into `count` slices (slice k starts at from + (to - from) · k / count, rounded
/// down) and gives each the state times of the spans overlapping it, a span's times spread evenly
/// over the span (rounded to the microsecond). The time no span covers is no data. A slice's
/// state is the largest of active, idle-held, truly idle, unmeasured and no data; ties go to the
/// one named first. Spans may come in any order; empty for count < 1 or to <= from.
std::vector<StateSlice> slice_states(const std::vector<StateSpan>& spans, TimeUs from, TimeUs to,
                                     int count);

/// "active", "idle-held", "truly-idle", "unmeasured" or "no-data".
std::string_view to_string(SliceState state);

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Slicing classified card-ticks into equal time cells.
#include "audit/slices.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace gua::audit {

namespace {

DurationUs pro_rata(DurationUs part, DurationUs overlap, DurationUs whole) {
    return static_cast<DurationUs>(std::llround(
        static_cast<double>(part) * static_cast<double>(overlap) / static_cast<double>(whole)));
}

SliceState dominant(const StateSlice& s) {
    const std::array<DurationUs, 5> time{s.times.active, s.times.idle_held, s.times.truly_idle,
                                         s.times.unmeasured, s.no_data_us};
    std::size_t best = 0;
    for (std::size_t i = 1; i < time.size(); ++i) {
        best = time[i] > time[best] ? i : best;
    }
    return static_cast<SliceState>(best);
}

} // namespace

std::vector<StateSlice> slice_states(const std::vector<StateSpan>& spans, TimeUs from, TimeUs to,
                                     int count) {
    std::vector<StateSlice> slices;
    if (count < 1 || to <= from) {
        return slices;
    }
    const auto n = static_cast<std::size_t>(count);
    // from + floor(length · k / n) without overflow: length = q · n + r.
    const DurationUs q = (to - from) / count;
    const DurationUs r = (to - from) % count;
    std::vector<TimeUs> bound(n + 1);
    for (std::size_t k = 0; k <= n; ++k) {
        const auto kk = static_cast<DurationUs>(k);
        bound[k] = from + q * kk + r * kk / count;
    }
    slices.resize(n);
    std::vector<DurationUs> covered(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
        slices[k].start = bound[k];
        slices[k].end = bound[k + 1];
    }
    for (const StateSpan& span : spans) {
        const TimeUs span_end = span.t0 + span.duration_us;
        if (span.duration_us <= 0 || span_end <= from || span.t0 >= to) {
            continue;
        }
        // The first slice that ends after the span starts.
        auto k = static_cast<std::size_t>(
            std::upper_bound(bound.begin() + 1, bound.end(), span.t0) - (bound.begin() + 1));
        for (; k < n && bound[k] < span_end; ++k) {
            const DurationUs overlap =
                std::min(span_end, bound[k + 1]) - std::max(span.t0, bound[k]);
            if (overlap <= 0) {
                continue;
            }
            StateTimes& t = slices[k].times;
            t.active += pro_rata(span.times.active, overlap, span.duration_us);
            t.idle_held += pro_rata(span.times.idle_held, overlap, span.duration_us);
            t.truly_idle += pro_rata(span.times.truly_idle, overlap, span.duration_us);
            t.unmeasured += pro_rata(span.times.unmeasured, overlap, span.duration_us);
            covered[k] += overlap;
        }
    }
    for (std::size_t k = 0; k < n; ++k) {
        slices[k].no_data_us =
            std::max<DurationUs>(slices[k].end - slices[k].start - covered[k], 0);
        slices[k].state = dominant(slices[k]);
    }
    return slices;
}

std::string_view to_string(SliceState state) {
    switch (state) {
    case SliceState::active:
        return "active";
    case SliceState::idle_held:
        return "idle-held";
    case SliceState::truly_idle:
        return "truly-idle";
    case SliceState::unmeasured:
        return "unmeasured";
    case SliceState::no_data:
        break;
    }
    return "no-data";
}

} // namespace gua::audit

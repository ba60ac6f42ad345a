// SPDX-License-Identifier: Apache-2.0
// AllocationFold: crosses one card's poll-by-poll state decisions (active, idle-held, idle not
// held) with what the allocation source says owned the card, into the card-tick's allocation.
#pragma once

#include "alloc/source.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <optional>
#include <vector>

namespace gua::sampler {

/// The names the allocation sources may use for `device`: its NVML index and uuid; for a MIG
/// instance, the physical card's uuid, the instance's uuid and its GPU-instance id
/// (`gpu_instance`, when known), so that a whole-card allocation covers the instance and an
/// instance's covers only it.
alloc::CardQuery card_query(const telemetry::DeviceInfo& device,
                            std::optional<unsigned> gpu_instance);

/// One card's polls of one tick. Each poll span [begin, end) (wall time on the tick's timeline)
/// has measured active time, idle time held above the threshold, and idle time not held, as the
/// fold decided them for the span; the rest of the span is unmeasured (no reading, lost samples,
/// holders unknown). Within a span the decisions have no finer timing: a segment edge inside a
/// span takes each part in proportion to its overlap.
class AllocationFold {
  public:
    /// The card's running totals (µs) as the fold accumulates them.
    struct Totals {
        double active = 0;
        double idle_held = 0;
        double not_held = 0;
    };
    /// Forgets the polls of the previous tick (keeps the storage).
    void clear() { m_polls.clear(); }
    /// Records the poll span [begin, end) whose decisions moved the totals from `before` to
    /// `after`.
    void add(TimeUs begin, TimeUs end, const Totals& before, const Totals& after);
    /// Fills `record.allocation` and `record.allocations` for the tick [t0, t0 + span) from the
    /// segments `source` gives for `query`, crossed with the polls added since clear().
    /// `record` must already hold its finished measurement (active, unmeasured, idle parts).
    void finish(const alloc::AllocationSource& source, const alloc::CardQuery& query, TimeUs t0,
                DurationUs span, telemetry::CardTickRecord& record) const;
    /// As finish(), from `segments` already queried (in time order; time in [t0, t0 + span)
    /// that they leave out counts as unknown).
    void cross(const std::vector<alloc::Segment>& segments, TimeUs t0, DurationUs span,
               telemetry::CardTickRecord& record) const;

  private:
    struct Poll {
        TimeUs begin = 0;
        TimeUs end = 0;
        Totals delta;
    };
    std::vector<Poll> m_polls;
};

} // namespace gua::sampler

// SPDX-License-Identifier: Apache-2.0
// AllocationSource: which allocation (Slurm job, pod, reservation) owned each card over a span.
//
// Design. A source reads its scheduler in the background and keeps a short history of readings
// (a Timeline of Snapshots stamped with the wall time they were taken); the consumer asks per poll
// span, per card, and gets Segments that cover the span exactly. Edges are timed by the source,
// not by the consumer's polls: the mapping directory is watched with inotify (a file removed
// mid-tick ends the allocation there, timed to milliseconds), the kubelet is asked once a second.
// A source that is configured but unreadable, not yet read, or silent for longer than its
// confirmation grace answers "unknown" for that stretch, distinctly from "unallocated". Several
// sources combine in a CompositeSource: any allocation wins; else any unknown makes it unknown.
// Nothing here touches NVML: the consumer passes the names it knows for a card (CardQuery).
// Details and the user-facing rules: docs/allocations.md.
#pragma once

#include "alloc/allocation.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gua::alloc {

/// One allocation source of one host. Thread-safe: readers run on their own thread.
class AllocationSource {
  public:
    virtual ~AllocationSource() = default;
    /// A short description for logs and `gua doctor`, e.g. "mapping directory /run/gua-jobs".
    virtual std::string describe() const = 0;
    /// The card's segments covering [begin, end) exactly, in time order (begin < end).
    virtual std::vector<Segment> query(const CardQuery& card, TimeUs begin, TimeUs end) const = 0;
    /// Drops history older than `before` (the consumer will not ask about it again).
    virtual void forget_before(TimeUs before) = 0;
};

/// Several sources of one host as one: at each instant a card is allocated when any source says
/// so (their allocations together), else unknown when any source is unknown, else unallocated.
std::unique_ptr<AllocationSource>
make_composite_source(std::vector<std::unique_ptr<AllocationSource>> sources);

} // namespace gua::alloc

// SPDX-License-Identifier: Apache-2.0
// The allocation crossing of a card-tick: allocated, active, idle-held, allocated-unused and
// unknown time from the poll spans' decisions and the allocation source's segments.
#include "sampler/allocation_fold.hpp"

#include <algorithm>
#include <cmath>

namespace gua::sampler {

namespace {

/// Rounds `x` µs to an integer in [0, limit].
DurationUs rounded_within(double x, DurationUs limit) {
    return std::clamp<DurationUs>(std::llround(x), 0, std::max<DurationUs>(limit, 0));
}

/// Running sums of one crossing.
struct Crossing {
    DurationUs allocated = 0;
    DurationUs unknown = 0;
    AllocationFold::Totals in_allocated; ///< poll decisions within allocated stretches
    double unknown_not_held = 0;         ///< idle not held within unknown stretches
};

/// Appends the owners of an allocated stretch [begin, end), extending an owner whose last
/// stretch ends where this one begins.
void add_owners(const alloc::Segment& segment, TimeUs begin, TimeUs end,
                std::vector<telemetry::AllocationOwner>& owners) {
    for (const alloc::Allocation& a : segment.allocations) {
        const std::string_view kind = alloc::kind_name(a.kind);
        auto same = [&](const telemetry::AllocationOwner& o) {
            return o.kind == kind && o.id == a.id && o.user == a.user && o.account == a.account;
        };
        auto it = std::find_if(owners.rbegin(), owners.rend(), same);
        if (it != owners.rend() && it->end == begin) {
            it->end = end;
            continue;
        }
        owners.push_back(
            telemetry::AllocationOwner{std::string(kind), a.id, a.user, a.account, begin, end});
    }
}

} // namespace

alloc::CardQuery card_query(const telemetry::DeviceInfo& device,
                            std::optional<unsigned> gpu_instance) {
    alloc::CardQuery q;
    q.index = static_cast<unsigned>(std::max(device.index, 0));
    if (device.parent_uuid.empty()) {
        q.uuid = device.uuid;
        return q;
    }
    // A MIG instance: the physical card's names cover it whole; its own uuid and GPU-instance id
    // cover only it.
    q.uuid = device.parent_uuid;
    q.mig_uuid = device.uuid;
    q.gpu_instance = gpu_instance;
    return q;
}

void AllocationFold::add(TimeUs begin, TimeUs end, const Totals& before, const Totals& after) {
    if (end <= begin) {
        return;
    }
    m_polls.push_back(Poll{begin, end,
                           Totals{after.active - before.active, after.idle_held - before.idle_held,
                                  after.not_held - before.not_held}});
}

void AllocationFold::finish(const alloc::AllocationSource& source, const alloc::CardQuery& query,
                            TimeUs t0, DurationUs span, telemetry::CardTickRecord& record) const {
    record.allocation = {};
    record.allocations.clear();
    if (span <= 0) {
        return;
    }
    cross(source.query(query, t0, t0 + span), t0, span, record);
}

void AllocationFold::cross(const std::vector<alloc::Segment>& segments, TimeUs t0, DurationUs span,
                           telemetry::CardTickRecord& record) const {
    record.allocation = {};
    record.allocations.clear();
    Crossing c;
    // Each poll's decisions in proportion to its overlap with [begin, end).
    const auto take = [&](TimeUs begin, TimeUs end, alloc::AllocationState state) {
        if (state == alloc::AllocationState::unallocated || begin >= end) {
            return;
        }
        const bool allocated = state == alloc::AllocationState::allocated;
        (allocated ? c.allocated : c.unknown) += end - begin;
        for (const Poll& p : m_polls) {
            const TimeUs overlap = std::min(p.end, end) - std::max(p.begin, begin);
            if (overlap <= 0) {
                continue;
            }
            const double f = static_cast<double>(overlap) / static_cast<double>(p.end - p.begin);
            if (allocated) {
                c.in_allocated.active += p.delta.active * f;
                c.in_allocated.idle_held += p.delta.idle_held * f;
                c.in_allocated.not_held += p.delta.not_held * f;
            } else {
                c.unknown_not_held += p.delta.not_held * f;
            }
        }
    };
    const TimeUs end = t0 + span;
    TimeUs cursor = t0;
    for (const alloc::Segment& s : segments) {
        const TimeUs b = std::max({s.begin, t0, cursor});
        const TimeUs e = std::min(s.end, end);
        if (b >= e) {
            continue;
        }
        take(cursor, b, alloc::AllocationState::unknown); // a gap the source left: unknown
        take(b, e, s.state);
        if (s.state == alloc::AllocationState::allocated) {
            add_owners(s, b, e, record.allocations);
        }
        cursor = e;
    }
    take(cursor, end, alloc::AllocationState::unknown);

    // The card's own totals bound the crossing; a tick wholly allocated (or wholly unknown)
    // takes them exactly, so that the store keeps such a tick as one code.
    const DurationUs active = record.active_us.value_or(0);
    const DurationUs held =
        record.active_us
            ? std::max<DurationUs>(span - record.unmeasured_us - active - record.idle_unknown_us -
                                       record.idle_unlisted_us,
                                   0)
            : 0;
    const DurationUs not_held = std::max<DurationUs>(record.idle_unlisted_us, 0);
    telemetry::AllocationTimes& a = record.allocation;
    a.allocated_us = c.allocated;
    a.unknown_us = c.unknown;
    if (c.allocated == span) {
        a.active_us = active;
        a.idle_held_us = held;
        a.unused_us = not_held;
    } else if (c.allocated > 0) {
        a.active_us = rounded_within(c.in_allocated.active, std::min(active, c.allocated));
        a.idle_held_us =
            rounded_within(c.in_allocated.idle_held, std::min(held, c.allocated - a.active_us));
        a.unused_us =
            rounded_within(c.in_allocated.not_held,
                           std::min(not_held, c.allocated - a.active_us - a.idle_held_us));
    }
    if (c.unknown == span) {
        a.unknown_idle_us = not_held;
    } else if (c.unknown > 0) {
        a.unknown_idle_us =
            rounded_within(c.unknown_not_held, std::min(not_held - a.unused_us, c.unknown));
    }
}

} // namespace gua::sampler

// SPDX-License-Identifier: Apache-2.0
// A card's process accumulators of TickBuilder: kept across ticks, indexed by (pid, type, start
// time), reset at each tick's start and pruned of the processes no poll listed.
#include "sampler/fold.hpp"
#include "sampler/fold_detail.hpp"

#include <algorithm>

namespace gua::sampler {

using fold_detail::key_is;
using fold_detail::key_less;
using fold_detail::Start;

void TickBuilder::CardAcc::reset() {
    telemetry::DeviceInfo device = std::move(record.device);
    record = telemetry::CardTickRecord{};
    record.device = std::move(device);
    measured = 0;
    util_weighted = 0;
    active = 0;
    idle_unlisted = 0;
    idle_unknown = 0;
    idle_held = 0;
    buckets = {};
    measured_polls = 0;
    for (Counter& c : counters) {
        c.increase = 0;
        c.known = false;
    }
    means = {};
    lost = false;
    partial = false;
    snapshot = false;
    present = false;
    drop_unseen();
    for (std::size_t i = 0; i < live; ++i) {
        ProcAcc& acc = processes[i];
        acc.seen = false;
        acc.tick.mem_used_mib.reset();
        acc.tick.sm_util_pct.reset();
        acc.sm_weighted = 0;
        acc.sm_span = 0;
        acc.active = 0;
        acc.idle_held = 0;
        acc.has_sm = false;
    }
    hint = 0;
    allocation.clear();
}

void TickBuilder::CardAcc::drop_unseen() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live; ++i) {
        if (processes[i].seen) {
            if (kept != i) {
                std::swap(processes[kept], processes[i]);
            }
            ++kept;
        }
    }
    if (kept == live) {
        return;
    }
    live = kept;
    order.resize(live);
    for (std::size_t i = 0; i < live; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const telemetry::ProcessTick& x = processes[b].tick;
        return key_less(processes[a].tick, x.pid, x.type, x.start_ticks);
    });
}

std::vector<std::uint32_t>::iterator
TickBuilder::CardAcc::position(std::uint32_t pid, telemetry::ProcessType type, Start start) {
    return std::lower_bound(order.begin(), order.end(), 0U, [&](std::uint32_t i, auto) {
        return key_less(processes[i].tick, pid, type, start);
    });
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find(std::uint32_t pid, telemetry::ProcessType type,
                                                 Start start) {
    // Drivers list processes in the same order poll after poll: try the one after the last match.
    if (hint < order.size()) {
        ProcAcc& next = processes[order[hint]];
        if (key_is(next.tick, pid, type, start)) {
            ++hint;
            return &next;
        }
    }
    const auto it = position(pid, type, start);
    hint = static_cast<std::size_t>(it - order.begin()) + 1;
    if (it != order.end() && key_is(processes[*it].tick, pid, type, start)) {
        return &processes[*it];
    }
    return nullptr;
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find_latest(std::uint32_t pid,
                                                        telemetry::ProcessType type) {
    ProcAcc* latest = nullptr;
    for (auto it = position(pid, type, std::nullopt); it != order.end(); ++it) {
        ProcAcc& acc = processes[*it];
        if (acc.tick.pid != pid || acc.tick.type != type) {
            break;
        }
        latest = &acc;
    }
    return latest;
}

TickBuilder::ProcAcc& TickBuilder::CardAcc::insert(std::uint32_t pid, telemetry::ProcessType type,
                                                   Start start) {
    if (live == processes.size()) {
        processes.emplace_back();
    }
    ProcAcc& acc = processes[live];
    acc.tick.pid = pid;
    acc.tick.type = type;
    acc.tick.start_ticks = start;
    acc.tick.mem_used_mib.reset();
    acc.tick.sm_util_pct.reset();
    acc.sm_weighted = 0;
    acc.sm_span = 0;
    acc.active = 0;
    acc.idle_held = 0;
    acc.has_sm = false;
    acc.seen = false;
    acc.names_deferred = false;
    acc.listed_at = 0;
    acc.last_weight = 0;
    acc.last_mem_known = false;
    acc.serial.reset();
    order.insert(position(pid, type, start), static_cast<std::uint32_t>(live));
    ++live;
    return acc;
}

} // namespace gua::sampler

// SPDX-License-Identifier: Apache-2.0
// Hand-built card-ticks for the plan's tests: a card busy or idle over [t0, t0 + duration) with
// the processes it lists, fed to a DemandBuilder in (t0, gpu) order.
#pragma once

#include "plan/demand.hpp"

#include <cstdint>
#include <vector>

namespace gua::plan_test {

/// One process on a card-tick: its store row, identity row, memory, SM share and whether it
/// was active.
struct Proc {
    std::int64_t process = 0;
    std::uint32_t identity = 0;
    std::int64_t mib = 0;
    double sm_pct = 0;
    bool active = false;
};

/// A card-tick of `gpu`: active for the whole tick when any process is active, else idle-held
/// when it lists processes, else truly idle; `allocation` owns it when given.
inline audit::CardTick card_tick(std::uint32_t gpu, TimeUs t0, DurationUs duration,
                                 const std::vector<Proc>& procs,
                                 std::optional<std::uint32_t> allocation = std::nullopt) {
    audit::CardTick t;
    t.gpu = gpu;
    t.t0 = t0;
    t.duration_us = duration;
    t.util_source = telemetry::UtilSource::samples;
    bool active = false;
    for (const Proc& p : procs) {
        active = active || p.active;
    }
    t.active_us = active ? duration : 0;
    t.util_pct = active ? 50.0 : 0.0;
    t.idle_unlisted_us = procs.empty() ? duration : 0;
    for (const Proc& p : procs) {
        audit::ProcTick pt;
        pt.identity = p.identity;
        pt.mem_used_mib = p.mib;
        pt.sm_util_pct = p.sm_pct;
        pt.active_us = p.active ? duration / static_cast<DurationUs>(procs.size()) : 0;
        pt.idle_held_us = active ? 0 : duration / static_cast<DurationUs>(procs.size());
        t.processes.push_back(pt);
    }
    if (allocation) {
        t.allocations.push_back(audit::AllocationShare{*allocation, duration});
    }
    return t;
}

/// The process rows of `procs`, as the loader passes them.
inline std::vector<std::int64_t> ids_of(const std::vector<Proc>& procs) {
    std::vector<std::int64_t> out;
    for (const Proc& p : procs) {
        out.push_back(p.process);
    }
    return out;
}

/// A context of `cards` cards of one model on hosts of `per_host` cards, and `identities`
/// identities (the first `interactive` of them notebook kernels).
inline plan::DemandContext context(int cards, int per_host, int identities, int interactive,
                                   std::int64_t memory_mib = 81920,
                                   const char* model = "NVIDIA A100 80GB PCIe") {
    plan::DemandContext c;
    for (int i = 0; i < cards; ++i) {
        c.cards.push_back(plan::CardInfo{model, memory_mib, "host" + std::to_string(i / per_host)});
    }
    for (int i = 0; i < identities; ++i) {
        c.identity_label.push_back("user" + std::to_string(i));
        c.identity_interactive.push_back(i < interactive ? 1 : 0);
    }
    return c;
}

} // namespace gua::plan_test

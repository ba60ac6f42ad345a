// SPDX-License-Identifier: Apache-2.0
// Candidate aggregation over cards.
#include "policy/candidates.hpp"

#include <algorithm>
#include <map>

namespace gua::policy {

namespace {

struct Acc {
    Candidate candidate;
    bool all_idle = true;
    bool memory_known = true;
    std::int64_t memory_mib = 0;
};

} // namespace

std::vector<Candidate> idle_candidates(const std::vector<audit::CardNow>& cards,
                                       const audit::StreakBook& book,
                                       const audit::Thresholds& thresholds) {
    std::map<audit::ProcessKey, Acc> by_process;
    for (const audit::CardNow& card : cards) {
        const telemetry::DeviceInfo& device = card.record->device;
        for (const audit::HoldingSeen& h : audit::holdings_of(card, thresholds)) {
            auto [it, inserted] = by_process.try_emplace(h.process);
            Acc& acc = it->second;
            Candidate& c = acc.candidate;
            const std::optional<audit::Streak> streak =
                book.find(audit::HoldingKey{device.uuid, h.process});
            if (!h.idle_held || !streak) {
                acc.all_idle = false;
                continue;
            }
            if (inserted) {
                c.process = h.process;
                c.idle_us = streak->idle_us;
                c.idle_since = streak->since;
            }
            c.idle_us = std::min(c.idle_us, streak->idle_us);
            c.idle_since = std::max(c.idle_since, streak->since);
            c.gpus.push_back(GpuRef{device.index, device.uuid});
            for (const telemetry::ProcessTick& p : card.record->processes) {
                if (p.pid != h.process.pid || p.start_ticks != h.process.start_ticks ||
                    !audit::is_holder(audit::ProcTick{0, p.type, p.mem_used_mib, p.sm_util_pct,
                                                      p.active_us, p.idle_held_us},
                                      thresholds)) {
                    continue;
                }
                c.identity = p.identity;
                acc.memory_known = acc.memory_known && p.mem_used_mib.has_value();
                acc.memory_mib += p.mem_used_mib.value_or(0);
            }
        }
    }
    std::vector<Candidate> out;
    for (auto& [key, acc] : by_process) {
        if (!acc.all_idle || !key.start_ticks) {
            continue;
        }
        if (acc.memory_known) {
            acc.candidate.memory_mib = acc.memory_mib;
        }
        out.push_back(std::move(acc.candidate));
    }
    return out;
}

} // namespace gua::policy

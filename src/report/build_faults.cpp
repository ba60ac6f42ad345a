// SPDX-License-Identifier: Apache-2.0
// §9's driver-fault findings from the fault table: the events of the window, card by card,
// decided by audit/fault_findings.cpp.
#include "report/build_faults.hpp"

#include "audit/fault_findings.hpp"
#include "report/health_remedies.hpp"
#include "store/faults.hpp"

#include <map>

namespace gua::report {

void add_fault_findings(store::Database& db, const std::vector<store::GpuRow>& gpus,
                        std::optional<std::int64_t> gpu_filter, TimeUs from, TimeUs to,
                        ReportModel& m) {
    if (!m.health) {
        return;
    }
    std::map<std::string, const store::GpuRow*> by_uuid;
    for (const store::GpuRow& g : gpus) {
        by_uuid[g.uuid] = &g;
    }
    std::map<int, std::vector<telemetry::FaultEvent>> by_card;
    for (telemetry::FaultEvent& e : store::read_faults(db, from, to)) {
        const auto g = by_uuid.find(e.uuid);
        const int index = g == by_uuid.end() ? -1 : g->second->index;
        if (gpu_filter && (g == by_uuid.end() || g->second->id != *gpu_filter)) {
            continue;
        }
        by_card[index].push_back(std::move(e));
    }
    if (by_card.empty()) {
        return;
    }
    for (const auto& [index, events] : by_card) {
        audit::add_fault_findings(index, events, m.health->findings);
    }
    m.health->remedies = health_remedies(*m.health, m.cost.gpus, gpus); // §8 with the faults
}

} // namespace gua::report

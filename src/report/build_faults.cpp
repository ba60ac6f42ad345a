// SPDX-License-Identifier: Apache-2.0
// §9's driver-fault findings from the fault table: the events of the window, card by card,
// decided by audit/fault_findings.cpp.
#include "report/build_faults.hpp"

#include "audit/fault_findings.hpp"
#include "core/units.hpp"
#include "report/health_remedies.hpp"
#include "store/faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::report {

namespace {

/// Appends card `index`'s time lost to faults (§3) to its findings from `first` on whose fault
/// strands the card, so §9 says what the fault cost.
void add_lost_time(int index, const ReportModel& m, std::size_t first,
                   std::vector<audit::HealthFinding>& findings) {
    const auto g = std::find_if(m.gpus.begin(), m.gpus.end(),
                                [&](const GpuRow& r) { return r.index == index; });
    if (g == m.gpus.end() || g->shares.lost_to_faults_hours <= 0) {
        return;
    }
    for (std::size_t i = first; i < findings.size(); ++i) {
        audit::HealthFinding& f = findings[i];
        if (f.id == "xid-hardware" || f.id == "xid-driver" || f.id == "xid-interconnect") {
            f.detail += fmt::format("; the card's held idle time after such faults, {} GPU-hours "
                                    "({:.1f}% of its time), is lost to faults, not idle-held",
                                    format_hours(g->shares.lost_to_faults_hours),
                                    g->shares.lost_to_faults * 100.0);
        }
    }
}

} // namespace

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
        const std::size_t first = m.health->findings.size();
        audit::add_fault_findings(index, events, m.health->findings);
        add_lost_time(index, m, first, m.health->findings);
    }
    m.health->remedies = health_remedies(*m.health, m.cost.gpus, gpus); // §8 with the faults
}

} // namespace gua::report

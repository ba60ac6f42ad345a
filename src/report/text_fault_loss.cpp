// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults as text (§1, §2, §3): formatting only, the figures come from the
// model; nothing is written for a window without such time.
#include "core/units.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report {

std::string fault_loss_headline_text(const ReportModel& m, int name_width) {
    const StateShares& h = m.headline;
    if (h.lost_to_faults_hours <= 0) {
        return "";
    }
    return fmt::format("  {:<{}} ×  {:5.1f}%  {:>10} GPU-hours (lost to faults: held idle after a "
                       "hardware, driver or interconnect fault; not billed)\n",
                       "fault-lost", name_width, state_percentages(h, m.allocation.has_value())[5],
                       format_hours(h.lost_to_faults_hours));
}

std::string fault_loss_waste_text(const ReportModel& m) {
    if (m.waste.lost_to_faults_gpu_hours <= 0) {
        return "";
    }
    return fmt::format("  fault-lost  {:>10} GPU-hours   (held idle on a card a fault broke: "
                       "not waste, not in idle-held)\n",
                       format_hours(m.waste.lost_to_faults_gpu_hours));
}

std::string fault_loss_gpus_text(const ReportModel& m) {
    std::string out;
    for (const GpuRow& g : m.gpus) {
        if (g.shares.lost_to_faults_hours > 0) {
            out += fmt::format("  GPU {}: {:.1f}% ({} GPU-hours) lost to faults, not in its "
                               "idle-held (docs/faults.md)\n",
                               g.index, state_percentages(g.shares, m.allocation.has_value())[5],
                               format_hours(g.shares.lost_to_faults_hours));
        }
    }
    return out;
}

} // namespace gua::report

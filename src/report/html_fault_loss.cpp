// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults in the HTML report (§2): formatting only, the figures come from the
// model and carry the JSON report's field names.
#include "core/units.hpp"
#include "report/html_sections.hpp"

#include <fmt/format.h>

namespace gua::report::html {

void fault_loss_paragraph(std::string& out, const ReportModel& m) {
    const double hours = m.waste.lost_to_faults_gpu_hours;
    if (hours <= 0) {
        return;
    }
    std::string cards;
    for (std::size_t i = 0; i < m.gpus.size(); ++i) {
        const StateShares& s = m.gpus[i].shares;
        if (s.lost_to_faults_hours > 0) {
            cards +=
                fmt::format("{}GPU {} {} GPU-hours", cards.empty() ? "" : ", ", m.gpus[i].index,
                            number(fmt::format("gpus.{}.states.lost_to_faults_gpu_hours", i),
                                   s.lost_to_faults_hours, format_hours(s.lost_to_faults_hours)));
        }
    }
    out += fmt::format("<p class=\"small\">Lost to faults: {} GPU-hours ({}) held idle on a card "
                       "that a hardware, driver or interconnect fault broke; not waste, not in "
                       "idle-held, not billed.</p>\n",
                       number("waste.lost_to_faults_gpu_hours", hours, format_hours(hours)), cards);
}

} // namespace gua::report::html

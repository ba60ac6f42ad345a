// SPDX-License-Identifier: Apache-2.0
// The HTML report's Allocations section (matrix, owners, use outside the scheduler) and the
// allocated-unused colour, both only in reports with allocations.
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report::html {

const std::string_view k_allocation_style = R"css(
:root{--alloc:#b0479a}@media (prefers-color-scheme:dark){:root{--alloc:#d77cc4}}
.x{fill:var(--alloc)}.sw.x{background:var(--alloc)}
)css";

namespace html_allocations_cpp { // named after the file: unique in a unity batch

std::string hours(const std::string& path, double h) {
    return num_td(number(path, h, format_hours(h)));
}

void matrix(std::string& out, const AllocationSection& a) {
    out += table_open({"GPU-hours", "#active", "#idle-held", "#unused"},
                      "Card time by allocation × state");
    const std::string k = "allocations.matrix.";
    out += "<tr><td>allocated</td>" +
           hours(k + "allocated.active_gpu_hours", a.allocated_active_hours) +
           hours(k + "allocated.idle_held_gpu_hours", a.allocated_idle_held_hours) +
           "<td class=\"n\"><span class=\"sw x\"></span>" +
           number(k + "allocated.allocated_unused_gpu_hours", a.allocated_unused_hours,
                  format_hours(a.allocated_unused_hours)) +
           " allocated-unused</td></tr>";
    out += "<tr><td>unallocated</td>" +
           hours(k + "unallocated.active_gpu_hours", a.unallocated_active_hours) +
           hours(k + "unallocated.idle_held_gpu_hours", a.unallocated_idle_held_hours) +
           "<td class=\"n\"><span class=\"sw t\"></span>" +
           number(k + "unallocated.truly_idle_gpu_hours", a.truly_idle_hours,
                  format_hours(a.truly_idle_hours)) +
           " truly idle</td></tr>";
    out += k_table_close;
    if (a.unknown_hours > 0) {
        out += fmt::format(
            "<p class=\"small muted\">Allocation unknown for {} GPU-hours (an "
            "allocation source could not be read); {} GPU-hours of use there are "
            "in neither row.</p>\n",
            number(k + "unknown.gpu_hours", a.unknown_hours, format_hours(a.unknown_hours)),
            number(k + "unknown.use_gpu_hours", a.unknown_use_hours,
                   format_hours(a.unknown_use_hours)));
    }
}

/// Allocated-unused alone, by the allocation's user: what a fleet source knows.
void owners_only(std::string& out, const AllocationSection& a, const std::string& currency) {
    out += fmt::format("<section id=\"allocations\"><h2>Allocations</h2>\n<p>Allocated-unused "
                       "{} GPU-hours; the allocation matrix and use outside the scheduler "
                       "need the hosts' databases (<code>gua report --db</code>).</p>\n",
                       number("allocations.allocated_unused_gpu_hours", a.allocated_unused_hours,
                              format_hours(a.allocated_unused_hours)));
    if (!a.owners.empty()) {
        out += table_open({"user", "#allocated-unused GPU-hours", "#allocated-unused cost"},
                          "Allocated-unused by the allocation's user");
        for (std::size_t i = 0; i < a.owners.size(); ++i) {
            const AllocationOwnerRow& r = a.owners[i];
            const std::string key = fmt::format("allocations.owners.{}.", i);
            out += fmt::format("<tr><td>{}</td>{}{}</tr>", esc(r.name),
                               hours(key + "allocated_unused_gpu_hours", r.allocated_unused_hours),
                               num_td(number(key + "allocated_unused_cents",
                                             static_cast<double>(r.allocated_unused_cents),
                                             format_money(r.allocated_unused_cents, currency))));
        }
        out += k_table_close;
    }
    out += "</section>\n";
}

/// Allocated-unused by owner, with their allocations and allocated hours.
void owner_table(std::string& out, const AllocationSection& a, const std::string& currency) {
    if (a.owners.empty()) {
        return;
    }
    out += table_open({"owner", "kind", "#allocations", "#allocated GPU-hours",
                       "#allocated-unused GPU-hours", "#allocated-unused cost"},
                      "Allocated-unused by owner (not part of any identity's GPU-hours)");
    for (std::size_t i = 0; i < a.owners.size(); ++i) {
        const AllocationOwnerRow& r = a.owners[i];
        const std::string key = fmt::format("allocations.owners.{}.", i);
        out += fmt::format("<tr><td>{}</td><td>{}</td>{}{}{}{}</tr>", esc(r.name), esc(r.kind),
                           num_td(std::to_string(r.allocations)),
                           hours(key + "allocated_gpu_hours", r.allocated_hours),
                           hours(key + "allocated_unused_gpu_hours", r.allocated_unused_hours),
                           num_td(number(key + "allocated_unused_cents",
                                         static_cast<double>(r.allocated_unused_cents),
                                         format_money(r.allocated_unused_cents, currency))));
    }
    out += k_table_close;
}

} // namespace html_allocations_cpp

void allocations_section(std::string& out, const ReportModel& m) {
    using namespace html_allocations_cpp;
    const AllocationSection& a = *m.allocation;
    if (!a.matrix_known) {
        owners_only(out, a, m.cost.currency);
        return;
    }
    out += fmt::format("<section id=\"allocations\"><h2>Allocations</h2>\n<p class=\"small "
                       "muted\">{} allocations (Slurm jobs, pods, reservations) held cards in "
                       "the window.</p>\n",
                       number("allocations.count", static_cast<double>(a.allocations),
                              std::to_string(a.allocations)));
    matrix(out, a);
    owner_table(out, a, m.cost.currency);
    if (a.unallocated_use.empty()) {
        out += "<p class=\"muted\">No use outside the scheduler.</p></section>\n";
        return;
    }
    out += table_open({"identity", "#active GPU-hours", "#idle-held GPU-hours"},
                      "Use outside the scheduler (cards no allocation owned)");
    for (std::size_t i = 0; i < a.unallocated_use.size(); ++i) {
        const UnallocatedUseRow& r = a.unallocated_use[i];
        const std::string key = fmt::format("allocations.unallocated_use.{}.", i);
        out += fmt::format("<tr><td>{}</td>{}{}</tr>", esc(r.name),
                           hours(key + "active_gpu_hours", r.active_hours),
                           hours(key + "idle_held_gpu_hours", r.idle_held_hours));
    }
    out += k_table_close;
    out += "</section>\n";
}

} // namespace gua::report::html

// SPDX-License-Identifier: Apache-2.0
// The text report's allocation parts: §4's allocated-unused by owner, the allocation matrix and
// use outside the scheduler (docs/allocations.md).
#include "audit/waste.hpp"
#include "core/units.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report {

std::vector<double> state_percentages(const StateShares& s, bool allocations) {
    if (s.lost_to_faults > 0) { // docs/faults.md: a sixth share, after allocated-unused
        return audit::rounded_percentages({s.active, s.idle_held, s.truly_idle, s.unmeasured,
                                           s.allocated_unused, s.lost_to_faults},
                                          1);
    }
    if (!allocations) {
        return audit::rounded_percentages({s.active, s.idle_held, s.truly_idle, s.unmeasured}, 1);
    }
    return audit::rounded_percentages(
        {s.active, s.idle_held, s.truly_idle, s.unmeasured, s.allocated_unused}, 1);
}

void render_allocation_owners_text(std::string& out, const AllocationSection& a) {
    if (a.owners.empty()) {
        return;
    }
    out += "  allocation owner          allocations   allocated GPU-h   allocated-unused GPU-h\n";
    for (const AllocationOwnerRow& r : a.owners) {
        const std::string name = (r.kind == "namespace" ? "ns " : "") +
                                 r.name.substr(0, r.kind == "namespace" ? 21 : 24);
        // Fleet reports know each owner's allocated-unused time only.
        out += fmt::format("  {:<24}  {:>11}   {:>15}   {:>22}\n", name,
                           a.matrix_known ? std::to_string(r.allocations) : "n/a",
                           a.matrix_known ? format_hours(r.allocated_hours) : "n/a",
                           format_hours(r.allocated_unused_hours));
    }
    out += "  (allocated-unused: the owner's allocations held the card, nobody used it; not part "
           "of any identity's GPU-hours)\n";
}

void render_allocation_text(std::string& out, const ReportModel& m) {
    const AllocationSection& a = *m.allocation;
    if (!a.matrix_known) {
        out += fmt::format("Allocations\n  allocated-unused {} GPU-hours; the allocation matrix "
                           "and use outside the scheduler need the hosts' databases (gua report "
                           "--db)\n",
                           format_hours(a.allocated_unused_hours));
        return;
    }
    out += fmt::format("Allocations ({} in window)\n", a.allocations);
    out += fmt::format("  {:<12} {:>12} {:>12} {:>12}\n", "GPU-hours", "active", "idle-held",
                       "unused");
    out += fmt::format("  {:<12} {:>12} {:>12} {:>12}  (allocated-unused)\n", "allocated",
                       format_hours(a.allocated_active_hours),
                       format_hours(a.allocated_idle_held_hours),
                       format_hours(a.allocated_unused_hours));
    out +=
        fmt::format("  {:<12} {:>12} {:>12} {:>12}  (truly idle)\n", "unallocated",
                    format_hours(a.unallocated_active_hours),
                    format_hours(a.unallocated_idle_held_hours), format_hours(a.truly_idle_hours));
    if (a.unknown_hours > 0) {
        out += fmt::format("  allocation unknown for {} GPU-hours (an allocation source could not "
                           "be read; {} GPU-hours of use there are in neither row)\n",
                           format_hours(a.unknown_hours), format_hours(a.unknown_use_hours));
    }
    if (a.unallocated_use.empty()) {
        out += "  no use outside the scheduler\n";
        return;
    }
    out += "  use outside the scheduler (unallocated cards):\n";
    out += fmt::format("  {:<20} {:>12} {:>12}\n", "identity", "active", "idle-held");
    for (const UnallocatedUseRow& r : a.unallocated_use) {
        out += fmt::format("  {:<20} {:>12} {:>12}\n", r.name.substr(0, 20),
                           format_hours(r.active_hours), format_hours(r.idle_held_hours));
    }
}

void render_jobs_text(std::string& out, const ReportModel& m) {
    out += "§4 Top jobs\n";
    if (!m.jobs || m.jobs->empty()) {
        out += "  (no jobs in window)\n";
        return;
    }
    out += "  job                  owner         GPUs  allocated     active  idle-held  "
           "alloc-unused        cost\n";
    bool summary = false;
    for (const JobGroupRow& r : *m.jobs) {
        summary = summary || r.from_summary;
        out += fmt::format("  {:<20} {:<12} {:>5} {:>10} {:>10} {:>10} {:>13} {:>11}\n",
                           (r.id + (r.from_summary ? " *" : "")).substr(0, 20),
                           r.owner.substr(0, 12), r.gpus_allocated, format_hours(r.allocated_hours),
                           format_hours(r.active_hours), format_hours(r.idle_held_hours),
                           format_hours(r.allocated_unused_hours),
                           format_money(r.cost_cents, m.cost.currency));
    }
    if (m.jobs_total > m.jobs->size()) {
        out += fmt::format("  (top {} of {} jobs)\n", m.jobs->size(), m.jobs_total);
    }
    out += "  (GPU-hours of each job's share of its cards in the window; cost: its allocated time "
           "priced per card)\n";
    if (summary) {
        out += "  (* from the per-job summary: retention removed the job's card-ticks, so these "
               "are its whole figures, not clipped to the window)\n";
    }
}

} // namespace gua::report

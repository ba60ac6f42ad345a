// SPDX-License-Identifier: Apache-2.0
// The HTML report's §4: by job with `gua report --group-by job` (the JSON report's jobs.top, one
// row per job), else by identity.
#include "core/units.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report::html {

namespace html_jobs_cpp { // named after the file: unique in a unity batch

std::string hours_cell(const std::string& path, double h) {
    return num_td(number(path, h, format_hours(h)));
}

/// One job's row; its figures marked with their jobs.top.<i> fields.
std::string job_row(const JobGroupRow& r, std::size_t i, const std::string& currency) {
    const std::string key = fmt::format("jobs.top.{}.", i);
    std::string owner = esc(r.owner);
    if (r.owner_kind == "namespace") {
        owner += " <span class=\"muted\">(namespace)</span>";
    }
    return fmt::format("<tr><td>{}{}</td><td>{}</td><td>{}</td>{}{}{}{}{}{}{}</tr>", esc(r.id),
                       r.from_summary ? " *" : "", esc(r.kind), owner,
                       num_td(number(key + "gpus_allocated", static_cast<double>(r.gpus_allocated),
                                     std::to_string(r.gpus_allocated))),
                       hours_cell(key + "allocated_gpu_hours", r.allocated_hours),
                       hours_cell(key + "active_gpu_hours", r.active_hours),
                       hours_cell(key + "idle_held_gpu_hours", r.idle_held_hours),
                       hours_cell(key + "allocated_unused_gpu_hours", r.allocated_unused_hours),
                       hours_cell(key + "unmeasured_gpu_hours", r.unmeasured_hours),
                       num_td(number(key + "cost_cents", static_cast<double>(r.cost_cents),
                                     format_money(r.cost_cents, currency))));
}

void jobs_section(std::string& out, const ReportModel& m) {
    out += "<section id=\"identities\"><h2>§4 Top jobs</h2>\n";
    if (m.jobs->empty()) {
        out += "<p class=\"muted\">No jobs in the window.</p></section>\n";
        return;
    }
    out += table_open({"job", "kind", "owner", "#GPUs", "#allocated", "#active", "#idle-held",
                       "#allocated-unused", "#unmeasured", "#cost"},
                      "GPU-hours of each job's share of its cards in the window");
    bool summary = false;
    for (std::size_t i = 0; i < m.jobs->size(); ++i) {
        summary = summary || (*m.jobs)[i].from_summary;
        out += job_row((*m.jobs)[i], i, m.cost.currency);
    }
    out += k_table_close;
    out += "<p class=\"small muted\">";
    if (m.jobs_total > m.jobs->size()) {
        out += fmt::format(
            "Top {} of {} jobs. ", m.jobs->size(),
            number("jobs.total", static_cast<double>(m.jobs_total), std::to_string(m.jobs_total)));
    }
    out += "Cost: each job's allocated time priced per card.";
    if (summary) {
        out += " * From the per-job summary: retention removed the job's card-ticks, so these are "
               "its whole figures, not clipped to the window.";
    }
    out += "</p></section>\n";
}

} // namespace html_jobs_cpp

void top_section(std::string& out, const ReportModel& m) {
    if (m.jobs) {
        html_jobs_cpp::jobs_section(out, m);
    } else {
        identities_chart(out, m);
    }
}

} // namespace gua::report::html

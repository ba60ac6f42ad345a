// SPDX-License-Identifier: Apache-2.0
// The `allocations` JSON object: card time by allocation × state, allocated-unused by owner, and
// use outside the scheduler by identity (docs/report-json.md).
#include "report/json_sections.hpp"

namespace gua::report {

nlohmann::json allocations_json(const AllocationSection& a) {
    using nlohmann::json;
    json owners = json::array();
    for (const AllocationOwnerRow& r : a.owners) {
        // Fleet reports know each owner's allocated-unused time only: the rest is null.
        owners.push_back(
            {{"name", r.name},
             {"kind", r.kind},
             {"allocations", a.matrix_known ? json(r.allocations) : json()},
             {"allocated_gpu_hours", a.matrix_known ? json(r.allocated_hours) : json()},
             {"allocated_unused_gpu_hours", r.allocated_unused_hours},
             {"allocated_unused_cents", r.allocated_unused_cents}});
    }
    json outside = json::array();
    for (const UnallocatedUseRow& r : a.unallocated_use) {
        outside.push_back({{"name", r.name},
                           {"active_gpu_hours", r.active_hours},
                           {"idle_held_gpu_hours", r.idle_held_hours}});
    }
    if (!a.matrix_known) {
        return json{{"count", nullptr},
                    {"matrix", nullptr},
                    {"allocated_unused_gpu_hours", a.allocated_unused_hours},
                    {"owners", owners},
                    {"unallocated_use", outside}};
    }
    return json{
        {"count", a.allocations},
        {"allocated_unused_gpu_hours", a.allocated_unused_hours},
        {"matrix",
         {{"allocated",
           {{"active_gpu_hours", a.allocated_active_hours},
            {"idle_held_gpu_hours", a.allocated_idle_held_hours},
            {"allocated_unused_gpu_hours", a.allocated_unused_hours}}},
          {"unallocated",
           {{"active_gpu_hours", a.unallocated_active_hours},
            {"idle_held_gpu_hours", a.unallocated_idle_held_hours},
            {"truly_idle_gpu_hours", a.truly_idle_hours}}},
          {"unknown", {{"gpu_hours", a.unknown_hours}, {"use_gpu_hours", a.unknown_use_hours}}}}},
        {"owners", owners},
        {"unallocated_use", outside}};
}

nlohmann::json jobs_json(const std::vector<JobGroupRow>& jobs, std::size_t total) {
    using nlohmann::json;
    json top = json::array();
    for (const JobGroupRow& r : jobs) {
        top.push_back({{"id", r.id},
                       {"kind", r.kind},
                       {"owner", r.owner},
                       {"owner_kind", r.owner_kind},
                       {"gpus_allocated", r.gpus_allocated},
                       {"allocated_gpu_hours", r.allocated_hours},
                       {"active_gpu_hours", r.active_hours},
                       {"idle_held_gpu_hours", r.idle_held_hours},
                       {"allocated_unused_gpu_hours", r.allocated_unused_hours},
                       {"unmeasured_gpu_hours", r.unmeasured_hours},
                       {"cost_cents", r.cost_cents},
                       {"from_summary", r.from_summary}});
    }
    return {{"top", top}, {"total", total}};
}

} // namespace gua::report

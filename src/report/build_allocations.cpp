// SPDX-License-Identifier: Apache-2.0
// Report building for allocations: maps the audit's allocation totals onto the model.
#include "report/build_allocations.hpp"

#include "audit/cost.hpp"

#include <algorithm>
#include <tuple>

namespace gua::report {

namespace {

/// The matrix of all cards together.
audit::AllocationMatrix window_matrix(const audit::WindowAccumulator& acc) {
    audit::AllocationMatrix all;
    for (const audit::GpuTotals& g : acc.gpus()) {
        all += g.allocation;
    }
    return all;
}

/// Allocated-unused per owner, priced card by card.
std::vector<AllocationOwnerRow>
owner_rows(const audit::WindowAccumulator& acc,
           const std::vector<audit::AllocationRow>& allocations,
           const std::map<std::uint32_t, std::int64_t>& micros_of_gpu) {
    std::map<std::pair<std::string, std::string>, AllocationOwnerRow> by_owner;
    for (std::size_t a = 0; a < acc.allocations().size(); ++a) {
        const audit::AllocationTotals& t = acc.allocations()[a];
        if (t.by_gpu.empty()) {
            continue;
        }
        const auto owner = a < allocations.size()
                               ? allocation_owner(allocations[a])
                               : std::pair<std::string, std::string>{"(unknown)", "user"};
        AllocationOwnerRow& row = by_owner[owner];
        row.name = owner.first;
        row.kind = owner.second;
        ++row.allocations;
        for (const audit::AllocationGpuTime& g : t.by_gpu) {
            row.allocated_hours += to_hours(g.allocated_us);
            row.allocated_unused_hours += to_hours(g.unused_us);
            const auto price = micros_of_gpu.find(g.gpu);
            if (price != micros_of_gpu.end()) {
                row.allocated_unused_cents += audit::cost_cents(g.unused_us, price->second);
            }
        }
    }
    std::vector<AllocationOwnerRow> rows;
    for (auto& [key, row] : by_owner) {
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        if (a.allocated_unused_hours != b.allocated_unused_hours) {
            return a.allocated_unused_hours > b.allocated_unused_hours;
        }
        return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
    });
    return rows;
}

/// Attributed time on cards no allocation owned, per identity group.
std::vector<UnallocatedUseRow> unallocated_rows(const audit::WindowAccumulator& acc,
                                                const std::vector<store::IdentityRow>& identities,
                                                const audit::Grouping& grouping) {
    std::map<std::string, UnallocatedUseRow> by_group;
    const auto add = [&](const std::string& group, const audit::IdentityTotals& t) {
        if (t.unallocated_active_us + t.unallocated_idle_held_us <= 0) {
            return;
        }
        UnallocatedUseRow& row = by_group[group];
        row.name = group;
        row.active_hours += to_hours(t.unallocated_active_us);
        row.idle_held_hours += to_hours(t.unallocated_idle_held_us);
    };
    for (const store::IdentityRow& i : identities) {
        const auto id = static_cast<std::size_t>(i.id);
        if (id < acc.identities().size() && acc.identities()[id].ticks > 0) {
            add(grouping.group_of(i.identity), acc.identities()[id]);
        }
    }
    if (!acc.identities().empty()) {
        add("(no process)", acc.identities()[0]);
    }
    std::vector<UnallocatedUseRow> rows;
    for (auto& [name, row] : by_group) {
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        const double ha = a.active_hours + a.idle_held_hours;
        const double hb = b.active_hours + b.idle_held_hours;
        return ha != hb ? ha > hb : a.name < b.name;
    });
    return rows;
}

} // namespace

std::pair<std::string, std::string> allocation_owner(const audit::AllocationRow& row) {
    if (row.kind == "pod") {
        return {row.account.empty() ? "(unknown)" : row.account, "namespace"};
    }
    return {row.user.empty() ? "(unknown)" : row.user, "user"};
}

std::optional<AllocationSection> allocation_section(
    const audit::WindowAccumulator& acc, const std::vector<store::IdentityRow>& identities,
    const std::vector<audit::AllocationRow>& allocations, const audit::Grouping& grouping,
    const std::map<std::uint32_t, std::int64_t>& micros_of_gpu) {
    const audit::AllocationMatrix all = window_matrix(acc);
    if (!all.any()) {
        return std::nullopt;
    }
    AllocationSection s;
    s.allocated_active_hours = to_hours(all.allocated_active);
    s.allocated_idle_held_hours = to_hours(all.allocated_idle_held);
    s.allocated_unused_hours = to_hours(all.allocated_unused);
    s.unallocated_active_hours = to_hours(all.unallocated_active);
    s.unallocated_idle_held_hours = to_hours(all.unallocated_idle_held);
    s.truly_idle_hours = to_hours(all.unallocated_truly_idle);
    s.unknown_hours = to_hours(all.unknown);
    s.unknown_use_hours = to_hours(all.unknown_use);
    s.allocations = static_cast<std::size_t>(
        std::count_if(acc.allocations().begin(), acc.allocations().end(),
                      [](const audit::AllocationTotals& t) { return !t.by_gpu.empty(); }));
    s.owners = owner_rows(acc, allocations, micros_of_gpu);
    s.unallocated_use = unallocated_rows(acc, identities, grouping);
    return s;
}

} // namespace gua::report

// SPDX-License-Identifier: Apache-2.0
// The allocation metrics: allocated-unused seconds per owner (user, account or namespace; labels
// bounded like the user labels) and the allocations running on each card as an info gauge.
#include "export/exposition.hpp"
#include "export/metrics.hpp"
#include "telemetry/exported_families.hpp"

#include <algorithm>

namespace gua::exporter {

using telemetry::Family;
using telemetry::family_name;

void Metrics::OwnerCounters::add(const std::string& owner, double us, std::size_t max_labels) {
    auto it = label.find(owner);
    if (it == label.end()) {
        const bool own = label.size() < max_labels;
        it = label.emplace(owner, own ? owner : std::string(k_other_user)).first;
    }
    unused_us[it->second] += us;
}

void Metrics::add_allocations(const audit::CardTick& tick, const audit::StateTimes& states,
                              const std::vector<audit::AllocationRow>& allocations) {
    if (states.allocated_unused <= 0 || tick.allocations.empty()) {
        return;
    }
    double overlap = 0;
    for (const audit::AllocationShare& s : tick.allocations) {
        overlap += static_cast<double>(std::max<DurationUs>(s.overlap_us, 0));
    }
    if (overlap <= 0) {
        return;
    }
    // Each owner gets the card's allocated-unused time in proportion to its overlap.
    for (const audit::AllocationShare& s : tick.allocations) {
        const double us = static_cast<double>(states.allocated_unused) *
                          static_cast<double>(std::max<DurationUs>(s.overlap_us, 0)) / overlap;
        const audit::AllocationRow* row =
            s.allocation < allocations.size() ? &allocations[s.allocation] : nullptr;
        m_unused_by_user.add(row ? sanitize_user(row->user) : "unknown", us, m_options.max_users);
        m_unused_by_account.add(row ? sanitize_user(row->account) : "unknown", us,
                                m_options.max_users);
    }
}

void Metrics::render_allocations(Exposition& e) const {
    for (const auto& [user, us] : m_unused_by_user.unused_us) {
        e.add(family_name(Family::allocated_unused_user_seconds_total), {{"user", user}},
              us / static_cast<double>(k_us_per_second));
    }
    for (const auto& [account, us] : m_unused_by_account.unused_us) {
        e.add(family_name(Family::allocated_unused_account_seconds_total), {{"account", account}},
              us / static_cast<double>(k_us_per_second));
    }
    for (const auto& [uuid, r] : m_readings) {
        for (const telemetry::AllocationOwner& a : r.allocations) {
            e.add(family_name(Family::allocation_info),
                  {{"gpu", std::to_string(r.labels.index)},
                   {"uuid", uuid},
                   {"kind", a.kind},
                   {"id", sanitize_name(a.id)},
                   {"user", sanitize_user(a.user)},
                   {"account", sanitize_name(a.account)}},
                  1);
        }
    }
}

} // namespace gua::exporter

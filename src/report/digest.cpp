// SPDX-License-Identifier: Apache-2.0
// Taking a digest's figures from finished report models: §4 rows, §7 cost, allocation owners,
// §8 recommendations and the card timelines.
#include "report/digest.hpp"

#include <algorithm>

namespace gua::report {

namespace {

const IdentityRow* identity_row(const ReportModel& m, const std::string& name) {
    const auto it = std::find_if(m.identities.begin(), m.identities.end(),
                                 [&](const IdentityRow& r) { return r.name == name; });
    return it == m.identities.end() ? nullptr : &*it;
}

const IdentityCostRow* cost_row(const ReportModel& m, const std::string& name) {
    const auto& rows = m.cost.identities;
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const IdentityCostRow& r) { return r.name == name; });
    return it == rows.end() ? nullptr : &*it;
}

/// The allocation owner row of `name` (a user, or a namespace for namespace groups).
const AllocationOwnerRow* owner_row(const ReportModel& m, const std::string& name) {
    if (!m.allocation) {
        return nullptr;
    }
    const auto& rows = m.allocation->owners;
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const AllocationOwnerRow& r) { return r.name == name; });
    return it == rows.end() ? nullptr : &*it;
}

DigestAdvice advice_of(const audit::Recommendation& r) {
    return DigestAdvice{r.id, r.title, r.remedy, r.addressed_gpu_hours, r.addressed_cents};
}

/// The first §8 recommendation naming `name`, or the first of all when `name` is empty.
std::optional<DigestAdvice> advice_for(const ReportModel& m, const std::string& name) {
    for (const audit::Recommendation& r : m.advice.recommendations) {
        if (name.empty() ||
            std::find(r.identities.begin(), r.identities.end(), name) != r.identities.end()) {
            return advice_of(r);
        }
    }
    return std::nullopt;
}

DigestFigures start(const ReportModel& now, const ReportModel& previous, std::string kind,
                    std::string name) {
    DigestFigures f;
    f.kind = std::move(kind);
    f.name = std::move(name);
    f.from = now.window_from;
    f.to = now.window_to;
    f.previous_from = previous.window_from;
    f.currency = now.cost.currency;
    return f;
}

} // namespace

std::optional<double> DigestTrend::change_pct() const {
    if (previous == 0) {
        return std::nullopt;
    }
    return (now - previous) / previous * 100.0;
}

std::optional<DigestFigures> identity_digest(const ReportModel& now, const ReportModel& previous,
                                             const std::string& kind, const std::string& name,
                                             const ReportModel* sessions_from) {
    const IdentityRow* row = identity_row(now, name);
    if (row == nullptr) {
        return std::nullopt;
    }
    DigestFigures f = start(now, previous, kind, name);
    f.active_hours = row->active_hours;
    f.idle_held_hours = row->idle_held_hours;
    if (const IdentityCostRow* c = cost_row(now, name)) {
        f.active_cents = c->active_cents;
        f.idle_held_cents = c->idle_held_cents;
    }
    if (now.allocation) {
        const AllocationOwnerRow* o = owner_row(now, name);
        f.allocated_unused_hours = o == nullptr ? 0.0 : o->allocated_unused_hours;
        f.allocated_unused_cents = o == nullptr ? 0 : o->allocated_unused_cents;
    }
    const IdentityRow* before = identity_row(previous, name);
    f.gpu_hours = DigestTrend{row->gpu_hours, before == nullptr ? 0.0 : before->gpu_hours};
    f.idle_held_trend =
        DigestTrend{row->idle_held_hours, before == nullptr ? 0.0 : before->idle_held_hours};
    if (sessions_from != nullptr) {
        f.worst_sessions = worst_sessions(*sessions_from, 3);
    }
    f.advice = advice_for(now, name);
    return f;
}

DigestFigures admin_digest(const ReportModel& now, const ReportModel& previous) {
    DigestFigures f = start(now, previous, "admin", "admin");
    f.active_hours = now.headline.active_hours;
    f.idle_held_hours = now.headline.idle_held_hours;
    f.active_cents = now.cost.total.active_cents;
    f.idle_held_cents = now.cost.total.idle_held_cents;
    if (now.allocation) {
        f.allocated_unused_hours = now.headline.allocated_unused_hours;
        f.allocated_unused_cents = now.cost.total.allocated_unused_cents;
    }
    const auto used = [](const ReportModel& m) {
        return m.headline.active_hours + m.headline.idle_held_hours;
    };
    f.gpu_hours = DigestTrend{used(now), used(previous)};
    f.idle_held_trend =
        DigestTrend{now.headline.idle_held_hours, previous.headline.idle_held_hours};
    f.worst_sessions = worst_sessions(now, 5);
    f.advice = advice_for(now, "");
    return f;
}

std::vector<DigestSession> worst_sessions(const ReportModel& m, std::size_t count) {
    std::vector<DigestSession> out;
    for (std::size_t g = 0; g < m.timeline.gpus.size(); ++g) {
        const GpuTimeline& tl = m.timeline.gpus[g];
        const std::string model = g < m.gpus.size() ? m.gpus[g].model : std::string();
        std::optional<DigestSession> open;
        for (const TimelineSpan& s : tl.spans) {
            if (open && (s.idle_held_hours <= 0 || s.from != open->to)) {
                out.push_back(*open);
                open.reset();
            }
            if (s.idle_held_hours <= 0) {
                continue;
            }
            if (!open) {
                open = DigestSession{tl.index, model, m.host, s.from, s.to, 0};
            }
            open->to = s.to;
            open->idle_held_hours += s.idle_held_hours;
        }
        if (open) {
            out.push_back(*open);
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const DigestSession& a, const DigestSession& b) {
        return a.idle_held_hours > b.idle_held_hours;
    });
    out.resize(std::min(out.size(), count));
    return out;
}

DigestMessage digest_message(const DigestFigures& f, const std::string& address) {
    return DigestMessage{
        f.kind, f.name, address, digest_subject(f), render_digest_text(f), render_digest_html(f)};
}

} // namespace gua::report

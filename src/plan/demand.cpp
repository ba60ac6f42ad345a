// SPDX-License-Identifier: Apache-2.0
// DemandBuilder: which units held each busy card-tick, and how much of it.
#include "plan/demand.hpp"

#include "audit/classify.hpp"

#include <algorithm>

namespace gua::plan {

namespace {

/// Busy: active or idle-held as the audit classifies it; a card whose utilization was not
/// measured (MIG) is busy when it is held.
bool busy_of(const audit::CardTick& t, const audit::Thresholds& th) {
    const audit::StateTimes st = audit::classify(t, th);
    if (st.active + st.idle_held > 0) {
        return true;
    }
    return !t.active_us && audit::is_held(t, th);
}

/// The allocation that owned the card-tick longest, if any.
std::optional<std::uint32_t> owner_of(const audit::CardTick& t) {
    std::optional<std::uint32_t> best;
    DurationUs longest = 0;
    for (const audit::AllocationShare& a : t.allocations) {
        if (a.overlap_us > longest) {
            longest = a.overlap_us;
            best = a.allocation;
        }
    }
    return best;
}

const std::string k_no_command;

bool command_is_interactive(const std::string& command) {
    return command.find("ipykernel") != std::string::npos ||
           command.find("jupyter") != std::string::npos;
}

} // namespace

bool is_interactive(const telemetry::Identity& identity, const std::string& command) {
    return !identity.jupyter_kernel.empty() || command_is_interactive(command) ||
           command_is_interactive(identity.command) ||
           identity.systemd_unit.find("jupyter") != std::string::npos;
}

void append_phase(std::vector<Phase>& phases, TimeUs begin, TimeUs end, bool active) {
    if (!phases.empty() && phases.back().end == begin && phases.back().active == active) {
        phases.back().end = end;
        return;
    }
    phases.push_back(Phase{begin, end, active});
}

std::vector<Phase> union_of(const std::vector<Presence>& presences) {
    if (presences.size() == 1) {
        return presences.front().phases;
    }
    // (time, +1/−1 held, +1/−1 active)
    std::vector<std::tuple<TimeUs, int, int>> edges;
    for (const Presence& p : presences) {
        for (const Phase& ph : p.phases) {
            edges.emplace_back(ph.begin, 1, ph.active ? 1 : 0);
            edges.emplace_back(ph.end, -1, ph.active ? -1 : 0);
        }
    }
    std::sort(edges.begin(), edges.end());
    std::vector<Phase> out;
    int held = 0;
    int active = 0;
    for (std::size_t i = 0; i < edges.size();) {
        const TimeUs t = std::get<0>(edges[i]);
        for (; i < edges.size() && std::get<0>(edges[i]) == t; ++i) {
            held += std::get<1>(edges[i]);
            active += std::get<2>(edges[i]);
        }
        if (i < edges.size() && held > 0) {
            append_phase(out, t, std::get<0>(edges[i]), active > 0);
        }
    }
    return out;
}

std::size_t DemandBuilder::pool_of(std::int64_t gpu) {
    if (const auto it = m_gpu_pool.find(gpu); it != m_gpu_pool.end()) {
        return it->second;
    }
    CardInfo card;
    if (gpu >= 0 && static_cast<std::size_t>(gpu) < m_context.cards.size()) {
        card = m_context.cards[static_cast<std::size_t>(gpu)];
    }
    const auto key = std::make_pair(card.model, card.memory_mib);
    auto [it, fresh] = m_pool_index.try_emplace(key, m_demand.pools.size());
    if (fresh) {
        m_demand.pools.push_back(Pool{card.model, card.memory_mib, 0, 1, std::nullopt});
        m_idle_watts.emplace_back();
    }
    Pool& pool = m_demand.pools[it->second];
    ++pool.gpus;
    int on_host = 0;
    for (const auto& [g, p] : m_gpu_pool) {
        const bool same_host = g >= 0 && static_cast<std::size_t>(g) < m_context.cards.size() &&
                               m_context.cards[static_cast<std::size_t>(g)].host == card.host;
        on_host += (p == it->second && same_host) ? 1 : 0;
    }
    pool.gpus_per_host = std::max(pool.gpus_per_host, on_host + 1);
    m_gpu_pool.emplace(gpu, it->second);
    return it->second;
}

std::uint32_t DemandBuilder::unit_for(std::int64_t key, UnitKind kind, const audit::CardTick& tick,
                                      const std::string& label, bool interactive) {
    auto& index = kind == UnitKind::gang ? m_gang_units : m_process_units;
    auto [it, fresh] = index.try_emplace(key, static_cast<std::uint32_t>(m_demand.units.size()));
    if (fresh) {
        Unit u;
        u.kind = kind;
        u.label = label;
        u.pool = pool_of(tick.gpu);
        u.interactive = interactive;
        m_demand.units.push_back(std::move(u));
        m_parent.push_back(it->second);
    }
    return it->second;
}

void DemandBuilder::note_coverage(const audit::CardTick& t, bool busy) {
    Coverage& c = m_demand.coverage;
    c.card_us += t.duration_us;
    c.unmeasured_us += t.unmeasured_us;
    ++c.raw_ticks;
    if (t.util_source == telemetry::UtilSource::snapshot) {
        c.snapshot_us += t.duration_us;
    }
    const TimeUs end = t.t0 + t.duration_us;
    auto& rec = m_demand.recorded;
    if (!rec.empty() && t.t0 <= rec.back().end) {
        rec.back().end = std::max(rec.back().end, end);
    } else {
        rec.push_back(Phase{t.t0, end, false});
    }
    const std::size_t pool = pool_of(t.gpu);
    if (!busy && t.active_us && t.readings.power_mw) {
        ++m_idle_watts[pool][(*t.readings.power_mw + 500) / 1000];
    }
}

std::uint32_t DemandBuilder::root(std::uint32_t unit) {
    while (m_parent[unit] != unit) {
        m_parent[unit] = m_parent[m_parent[unit]];
        unit = m_parent[unit];
    }
    return unit;
}

std::uint32_t DemandBuilder::process_unit(const audit::CardTick& tick, std::size_t i,
                                          std::int64_t id) {
    const audit::ProcTick& p = tick.processes[i];
    const bool known = p.identity < m_context.identity_label.size();
    const auto row = static_cast<std::size_t>(id);
    const std::string& command = id >= 0 && row < m_context.process_command.size()
                                     ? m_context.process_command[row]
                                     : k_no_command;
    std::string label = known ? m_context.identity_label[p.identity] : "unknown";
    if (!command.empty()) {
        label += " " + command;
    }
    std::uint32_t unit = root(unit_for(id, UnitKind::process, tick, label,
                                       (known && m_context.identity_interactive[p.identity] != 0) ||
                                           command_is_interactive(command)));
    const auto same = std::find_if(m_parts.begin(), m_parts.end(), [&](const Part& q) {
        return !q.gang && q.identity == p.identity && q.unit != unit;
    });
    if (same != m_parts.end()) {
        m_parent[unit] = same->unit;
        unit = same->unit;
    }
    return unit;
}

void DemandBuilder::collect_parts(const audit::CardTick& tick,
                                  const std::vector<std::int64_t>& ids) {
    m_parts.clear();
    const std::optional<std::uint32_t> owner = owner_of(tick);
    for (std::size_t i = 0; i < tick.processes.size(); ++i) {
        const audit::ProcTick& p = tick.processes[i];
        if (!audit::is_holder(p, m_context.thresholds)) {
            continue;
        }
        std::uint32_t unit = 0;
        if (owner) {
            const std::string& label = *owner < m_context.allocation_label.size()
                                           ? m_context.allocation_label[*owner]
                                           : std::string("allocation");
            unit = root(unit_for(*owner, UnitKind::gang, tick, label, false));
        } else {
            unit = process_unit(tick, i, i < ids.size() ? ids[i] : -1);
        }
        auto it = std::find_if(m_parts.begin(), m_parts.end(),
                               [&](const Part& q) { return q.unit == unit; });
        if (it == m_parts.end()) {
            m_parts.push_back(Part{unit, p.identity, owner.has_value()});
            it = m_parts.end() - 1;
        }
        it->mib += p.mem_used_mib.value_or(0);
        it->mib_unknown = it->mib_unknown || !p.mem_used_mib;
        it->sm_pct += p.sm_util_pct.value_or(0);
        it->sm_known = it->sm_known || p.sm_util_pct.has_value();
        const bool card_active = tick.active_us.value_or(1) > 0;
        it->active =
            it->active || (p.active_us ? *p.active_us > 0
                                       : card_active && (!p.sm_util_pct || *p.sm_util_pct > 0));
    }
}

void DemandBuilder::add(const audit::CardTick& tick, const std::vector<std::int64_t>& ids) {
    const bool busy = busy_of(tick, m_context.thresholds);
    note_coverage(tick, busy);
    if (!busy) {
        m_unattributed.erase(tick.gpu);
        return;
    }
    collect_parts(tick, ids);
    if (m_parts.empty()) {
        add_unattributed(tick);
        return;
    }
    m_unattributed.erase(tick.gpu);
    double sm_sum = 0;
    for (const Part& p : m_parts) {
        sm_sum += p.sm_pct;
    }
    const std::optional<std::int64_t> gpm = tick.readings.sm_active_cpct;
    for (const Part& p : m_parts) {
        double compute = p.sm_pct;
        if (gpm) {
            const double share =
                sm_sum > 0 ? p.sm_pct / sm_sum : 1.0 / static_cast<double>(m_parts.size());
            compute = static_cast<double>(*gpm) / 100.0 * share;
        }
        add_part(tick, p, compute, gpm.has_value());
    }
}

void DemandBuilder::add_part(const audit::CardTick& tick, const Part& part, double compute_pct,
                             bool gpm) {
    Unit& u = m_demand.units[part.unit];
    auto it = std::find_if(u.presences.begin(), u.presences.end(),
                           [&](const Presence& p) { return p.gpu == tick.gpu; });
    if (it == u.presences.end()) {
        u.presences.push_back(Presence{tick.gpu, {}});
        it = u.presences.end() - 1;
    }
    append_phase(it->phases, tick.t0, tick.t0 + tick.duration_us, part.active);
    u.peak_mib = std::max(u.peak_mib, part.mib);
    u.memory_unknown = u.memory_unknown || part.mib_unknown;
    if (part.sm_known || gpm) {
        u.compute_measured = true;
        u.compute_gpm = u.compute_gpm || gpm;
        u.peak_compute_pct = std::max(u.peak_compute_pct, compute_pct);
    }
    if (part.active) {
        u.active_us += tick.duration_us;
        u.compute_pct_us += compute_pct * static_cast<double>(tick.duration_us);
    }
}

void DemandBuilder::add_unattributed(const audit::CardTick& tick) {
    m_demand.coverage.unattributed_us += tick.duration_us - tick.unmeasured_us;
    auto it = m_unattributed.find(tick.gpu);
    if (it == m_unattributed.end() ||
        m_demand.units[it->second].presences.front().phases.back().end != tick.t0) {
        Unit u;
        u.kind = UnitKind::unattributed;
        u.label = "no listed process";
        u.pool = pool_of(tick.gpu);
        u.memory_unknown = true;
        u.presences.push_back(Presence{tick.gpu, {}});
        it = m_unattributed
                 .insert_or_assign(tick.gpu, static_cast<std::uint32_t>(m_demand.units.size()))
                 .first;
        m_parent.push_back(it->second);
        m_demand.units.push_back(std::move(u));
    }
    Unit& u = m_demand.units[it->second];
    append_phase(u.presences.front().phases, tick.t0, tick.t0 + tick.duration_us,
                 tick.active_us.value_or(1) > 0);
}

namespace {

/// `into` and `from` as one time-ordered list of phases (overlaps joined, active if either).
void merge_phases(std::vector<Phase>& into, const std::vector<Phase>& from) {
    std::vector<Phase> all = into;
    all.insert(all.end(), from.begin(), from.end());
    std::sort(all.begin(), all.end(),
              [](const Phase& a, const Phase& b) { return a.begin < b.begin; });
    into.clear();
    for (const Phase& ph : all) {
        if (!into.empty() && ph.begin < into.back().end) {
            into.back().end = std::max(into.back().end, ph.end);
            into.back().active = into.back().active || ph.active;
        } else {
            append_phase(into, ph.begin, ph.end, ph.active);
        }
    }
}

} // namespace

void DemandBuilder::fold_merged(std::vector<Unit>& units) {
    std::vector<Unit> roots;
    for (std::uint32_t u = 0; u < units.size(); ++u) {
        const std::uint32_t r = root(u);
        if (r == u) {
            continue;
        }
        Unit& to = units[r];
        Unit& from = units[u];
        for (Presence& p : from.presences) {
            const auto it = std::find_if(to.presences.begin(), to.presences.end(),
                                         [&](const Presence& q) { return q.gpu == p.gpu; });
            if (it == to.presences.end()) {
                to.presences.push_back(std::move(p));
            } else {
                merge_phases(it->phases, p.phases);
            }
        }
        to.interactive = to.interactive || from.interactive;
        to.peak_mib = std::max(to.peak_mib, from.peak_mib);
        to.memory_unknown = to.memory_unknown || from.memory_unknown;
        to.peak_compute_pct = std::max(to.peak_compute_pct, from.peak_compute_pct);
        to.compute_measured = to.compute_measured || from.compute_measured;
        to.compute_gpm = to.compute_gpm || from.compute_gpm;
        to.active_us += from.active_us;
        to.compute_pct_us += from.compute_pct_us;
    }
    for (std::uint32_t u = 0; u < units.size(); ++u) {
        if (root(u) == u) {
            roots.push_back(std::move(units[u]));
        }
    }
    units = std::move(roots);
}

Demand DemandBuilder::finish(TimeUs from, TimeUs to, std::optional<DurationUs> retention) {
    fold_merged(m_demand.units);
    Demand out = std::move(m_demand);
    out.from = from;
    out.to = to;
    out.coverage.window_us = to - from;
    out.coverage.raw_retention_us = retention;
    for (const Phase& r : out.recorded) {
        out.coverage.recorded_us += r.end - r.begin;
    }
    for (Unit& u : out.units) {
        u.gpus = std::max<int>(1, static_cast<int>(u.presences.size()));
        u.phases = union_of(u.presences);
        const Pool& pool = out.pools[u.pool];
        if (u.memory_unknown || u.kind == UnitKind::unattributed) {
            u.peak_mib = std::max(u.peak_mib, pool.memory_mib);
        }
    }
    for (std::size_t i = 0; i < out.pools.size(); ++i) {
        std::int64_t total = 0;
        for (const auto& [w, n] : m_idle_watts[i]) {
            total += n;
        }
        std::int64_t seen = 0;
        for (const auto& [w, n] : m_idle_watts[i]) {
            seen += n;
            if (2 * seen >= total) {
                out.pools[i].idle_power_w = static_cast<double>(w);
                break;
            }
        }
    }
    *this = DemandBuilder(DemandContext{});
    return out;
}

} // namespace gua::plan

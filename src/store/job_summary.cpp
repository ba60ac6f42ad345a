// SPDX-License-Identifier: Apache-2.0
// The allocation_summary tables (schema 15): read for `gua job`, brought up to date by retention.
#include "store/job_summary.hpp"

#include "store/allocations.hpp"
#include "store/reader.hpp"

#include <algorithm>

namespace gua::store {

namespace {

/// How far before an allocation's first instant a card-tick overlapping it may start.
constexpr DurationUs k_tick_lead_us = k_us_per_hour;

template <class T> std::optional<T> optional_of(Statement& st, int col, T value) {
    return st.is_null(col) ? std::nullopt : std::optional<T>(value);
}

void write_summary(Database& db, std::int64_t id, const StoredJobSummary& s) {
    Statement card = db.prepare(
        "INSERT OR REPLACE INTO allocation_summary (allocation_id, gpu_id, allocated_us, "
        "active_us, idle_held_us, unused_us, measured_us, sm_weighted, peak_sm_pct, "
        "peak_mem_mib, energy_j) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& [gpu, p] : s.cards) {
        card.bind(1, id);
        card.bind(2, gpu);
        card.bind(3, std::int64_t{p.allocated_us});
        card.bind(4, std::int64_t{p.active_us});
        card.bind(5, std::int64_t{p.idle_held_us});
        card.bind(6, std::int64_t{p.unused_us});
        card.bind(7, p.measured_us);
        card.bind(8, p.sm_weighted);
        card.bind(9, p.peak_sm_pct);
        card.bind(10, p.peak_mem_mib);
        card.bind(11, p.energy_j);
        card.run();
    }
    Statement state =
        db.prepare("INSERT OR REPLACE INTO allocation_summarized (allocation_id, through_us, "
                   "active_util_pct, held_mib, graphics_is_holder) VALUES (?,?,?,?,?)");
    state.bind(1, id);
    state.bind(2, std::int64_t{s.through_us});
    state.bind(3, s.thresholds.active_util_pct);
    state.bind(4, s.thresholds.held_mib);
    state.bind(5, std::int64_t{s.thresholds.graphics_is_holder ? 1 : 0});
    state.run();
}

} // namespace

std::vector<AllocationRecord> find_allocations(Database& db, const std::string& alloc_id) {
    ReadTransaction tx(db);
    Statement st = db.prepare(
        "SELECT a.id, a.kind, a.alloc_id, a.user, a.account, a.host, min(s.begin_us), "
        "max(s.end_us) FROM allocation a JOIN allocation_span s ON s.allocation_id = a.id "
        "WHERE a.alloc_id = ? GROUP BY a.id ORDER BY a.id");
    st.bind(1, alloc_id);
    std::vector<AllocationRecord> out;
    while (st.step()) {
        out.push_back(AllocationRecord{
            st.int64(0), audit::AllocationRow{st.text(1), st.text(2), st.text(3), st.text(4),
                                              st.text(5), st.int64(6), st.int64(7)}});
    }
    return out;
}

std::vector<std::int64_t> window_allocation_ids(Database& db, TimeUs from, TimeUs to) {
    ReadTransaction tx(db);
    return read_allocations(db, from, to).ids;
}

std::map<std::int64_t, StoredJobSummary> read_job_summaries(Database& db,
                                                            const std::vector<std::int64_t>& ids) {
    std::map<std::int64_t, StoredJobSummary> out;
    ReadTransaction tx(db);
    Statement state = db.prepare("SELECT through_us, active_util_pct, held_mib, "
                                 "graphics_is_holder FROM allocation_summarized "
                                 "WHERE allocation_id = ?");
    Statement cards =
        db.prepare("SELECT gpu_id, allocated_us, active_us, idle_held_us, unused_us, measured_us, "
                   "sm_weighted, peak_sm_pct, peak_mem_mib, energy_j FROM allocation_summary "
                   "WHERE allocation_id = ? ORDER BY gpu_id");
    for (const std::int64_t id : ids) {
        state.bind(1, id);
        if (!state.step()) {
            state.reset();
            continue;
        }
        StoredJobSummary& s = out[id];
        s.through_us = state.int64(0);
        s.thresholds = audit::Thresholds{state.real(1), state.int64(2), state.int64(3) != 0};
        state.reset();
        cards.bind(1, id);
        while (cards.step()) {
            audit::JobPartial p;
            p.allocated_us = cards.int64(1);
            p.active_us = cards.int64(2);
            p.idle_held_us = cards.int64(3);
            p.unused_us = cards.int64(4);
            p.measured_us = cards.real(5);
            p.sm_weighted = cards.real(6);
            p.peak_sm_pct = optional_of(cards, 7, cards.real(7));
            p.peak_mem_mib = optional_of(cards, 8, cards.int64(8));
            p.energy_j = optional_of(cards, 9, cards.real(9));
            s.cards[cards.int64(0)] = p;
        }
        cards.reset();
    }
    return out;
}

std::size_t summarize_allocations(Database& db, TimeUs from, TimeUs to,
                                  const audit::Thresholds& thresholds) {
    const WindowAllocations batch = read_allocations(db, from, to);
    std::map<std::int64_t, StoredJobSummary> stored = read_job_summaries(db, batch.ids);
    std::map<std::int64_t, TimeUs> start; // allocation id → the first card-tick to add
    TimeUs scan_from = to;
    for (std::size_t i = 0; i < batch.ids.size(); ++i) {
        const auto it = stored.find(batch.ids[i]);
        if (it != stored.end() && it->second.through_us >= to) {
            continue;
        }
        const TimeUs s =
            it != stored.end() ? it->second.through_us : batch.rows[i].first_us - k_tick_lead_us;
        start[batch.ids[i]] = s;
        scan_from = std::min(scan_from, s);
    }
    if (start.empty()) {
        return 0;
    }
    // Reader::scan indexes the allocations of its own window: read them for it.
    const WindowAllocations window = read_allocations(db, scan_from, to);
    std::vector<std::uint32_t> indexes;
    for (std::uint32_t k = 0; k < window.ids.size(); ++k) {
        if (start.contains(window.ids[k])) {
            indexes.push_back(k);
        }
    }
    audit::JobAccumulator acc(indexes, thresholds);
    for (const std::uint32_t k : indexes) {
        acc.start_at(k, start[window.ids[k]]);
    }
    Reader(db).scan(scan_from, to, [&acc](const audit::CardTick& t) { acc.add(t); });
    for (const auto& [key, part] : acc.partials()) {
        stored[window.ids[key.first]].cards[key.second] += part;
    }
    for (const auto& [id, s0] : start) {
        StoredJobSummary& s = stored[id];
        s.through_us = to;
        s.thresholds = thresholds;
        write_summary(db, id, s);
    }
    return start.size();
}

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// Allocation rows and their per-card spans: written as ticks arrive, read back per window.
#include "store/allocations.hpp"

#include <algorithm>

namespace gua::store {

void AllocationWriter::prepare(std::int64_t run_id) {
    if (!m_host) {
        Statement host = m_db.prepare("SELECT host FROM run WHERE id = ?");
        host.bind(1, run_id);
        m_host = host.step() ? host.text(0) : std::string();
    }
    if (m_insert_span) {
        return;
    }
    // No unique index (it would double the table's size): the writer looks an allocation up once
    // when it first meets it, and inserts it when it is new.
    m_insert_allocation.emplace(
        m_db.prepare("INSERT INTO allocation (kind, alloc_id, user, account, host) "
                     "VALUES (?,?,?,?,?) RETURNING id"));
    m_find_allocation.emplace(
        m_db.prepare("SELECT id FROM allocation WHERE kind = ? AND alloc_id = ? AND user = ? AND "
                     "account = ? AND host = ? ORDER BY id LIMIT 1"));
    m_insert_span.emplace(m_db.prepare("INSERT INTO allocation_span (allocation_id, gpu_id, "
                                       "run_id, begin_us, end_us) VALUES (?,?,?,?,?) "
                                       "RETURNING id"));
    m_extend_span.emplace(m_db.prepare("UPDATE allocation_span SET end_us = ? WHERE id = ?"));
}

std::int64_t AllocationWriter::allocation_id(const telemetry::AllocationOwner& owner) {
    auto key = std::tuple(owner.kind, owner.id, owner.user, owner.account);
    if (auto it = m_ids.find(key); it != m_ids.end()) {
        return it->second;
    }
    const auto bind = [&](Statement& st) {
        st.bind(1, owner.kind);
        st.bind(2, owner.id);
        st.bind(3, owner.user);
        st.bind(4, owner.account);
        st.bind(5, *m_host);
    };
    bind(*m_find_allocation);
    Statement* st = &*m_find_allocation;
    if (!st->step()) {
        st->reset();
        st = &*m_insert_allocation;
        bind(*st);
        st->step();
    }
    const std::int64_t id = st->int64(0);
    st->reset();
    if (m_ids.size() >= 4096) {
        m_ids.clear(); // bounded: jobs come and go
    }
    m_ids.emplace(std::move(key), id);
    return id;
}

void AllocationWriter::add(std::int64_t run_id, std::int64_t gpu_id,
                           const std::vector<telemetry::AllocationOwner>& owners) {
    if (owners.empty()) {
        return;
    }
    prepare(run_id);
    for (const telemetry::AllocationOwner& o : owners) {
        if (o.end <= o.begin) {
            continue;
        }
        const std::int64_t id = allocation_id(o);
        auto it = m_open.find({id, gpu_id});
        if (it != m_open.end() && it->second.end_us == o.begin) {
            m_extend_span->bind(1, std::int64_t{o.end});
            m_extend_span->bind(2, it->second.span_id);
            m_extend_span->run();
            it->second.end_us = o.end;
            continue;
        }
        Statement& st = *m_insert_span;
        st.bind(1, id);
        st.bind(2, gpu_id);
        st.bind(3, run_id);
        st.bind(4, std::int64_t{o.begin});
        st.bind(5, std::int64_t{o.end});
        st.step();
        const std::int64_t span_id = st.int64(0);
        st.reset();
        m_open[{id, gpu_id}] = Open{span_id, o.end};
    }
    // Spans that stopped growing are never extended again: keep the map to the recent ones.
    if (m_open.size() > 4096) {
        m_open.clear();
    }
}

void AllocationWriter::forget() {
    m_ids.clear();
    m_open.clear();
}

WindowAllocations read_allocations(Database& db, TimeUs from, TimeUs to) {
    WindowAllocations out;
    if (from >= to) {
        return out;
    }
    // Whole-table reads: the tables are small (a row per allocation, a span per card it held).
    Statement rows = db.prepare(
        "SELECT a.id, a.kind, a.alloc_id, a.user, a.account, a.host, s.first_us, s.last_us "
        "FROM allocation a JOIN (SELECT allocation_id, min(begin_us) AS first_us, max(end_us) AS "
        "last_us, max(end_us > ?1 AND begin_us < ?2) AS in_window FROM allocation_span GROUP BY "
        "allocation_id) s ON s.allocation_id = a.id WHERE s.in_window ORDER BY a.id");
    rows.bind(1, std::int64_t{from});
    rows.bind(2, std::int64_t{to});
    std::map<std::int64_t, std::int64_t> index;
    while (rows.step()) {
        index[rows.int64(0)] = static_cast<std::int64_t>(out.rows.size());
        out.ids.push_back(rows.int64(0));
        out.rows.push_back(audit::AllocationRow{rows.text(1), rows.text(2), rows.text(3),
                                                rows.text(4), rows.text(5), rows.int64(6),
                                                rows.int64(7)});
    }
    Statement spans = db.prepare("SELECT allocation_id, gpu_id, begin_us, end_us FROM "
                                 "allocation_span WHERE end_us > ?1 AND begin_us < ?2 "
                                 "ORDER BY gpu_id, begin_us, allocation_id");
    spans.bind(1, std::int64_t{from});
    spans.bind(2, std::int64_t{to});
    while (spans.step()) {
        const auto it = index.find(spans.int64(0));
        if (it != index.end()) {
            out.spans.push_back(
                AllocationSpan{it->second, spans.int64(1), spans.int64(2), spans.int64(3)});
        }
    }
    return out;
}

void AllocationShares::fill(audit::CardTick& tick) {
    tick.allocations.clear();
    const std::vector<AllocationSpan>& spans = m_window.spans;
    if (spans.empty()) {
        return;
    }
    const TimeUs begin = tick.t0;
    const TimeUs end = tick.t0 + std::max<DurationUs>(tick.duration_us, 0);
    const auto gpu = static_cast<std::int64_t>(tick.gpu);
    auto [cursor, fresh] = m_cursor.try_emplace(gpu, 0);
    if (fresh) {
        cursor->second = static_cast<std::size_t>(
            std::lower_bound(spans.begin(), spans.end(), gpu,
                             [](const AllocationSpan& s, std::int64_t g) { return s.gpu_id < g; }) -
            spans.begin());
    }
    std::size_t& first = cursor->second;
    while (first < spans.size() && spans[first].gpu_id == gpu && spans[first].end_us <= begin) {
        ++first; // ended before this tick: before every later tick of the card too
    }
    for (std::size_t i = first;
         i < spans.size() && spans[i].gpu_id == gpu && spans[i].begin_us < end; ++i) {
        const AllocationSpan& s = spans[i];
        const DurationUs overlap = std::min(end, s.end_us) - std::max(begin, s.begin_us);
        if (overlap <= 0) {
            continue;
        }
        const auto index = static_cast<std::uint32_t>(s.allocation_id);
        auto same = std::find_if(
            tick.allocations.begin(), tick.allocations.end(),
            [&](const audit::AllocationShare& share) { return share.allocation == index; });
        if (same != tick.allocations.end()) {
            same->overlap_us += overlap;
        } else {
            tick.allocations.push_back(audit::AllocationShare{index, overlap});
        }
    }
}

} // namespace gua::store

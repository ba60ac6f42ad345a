// SPDX-License-Identifier: Apache-2.0
// Block scanning: one ordered range query; each block decoded, filtered to the window and merged
// into the pending card-ticks, which are passed on as soon as no later block can precede them.
#include "store/raw.hpp"

#include "core/fatal.hpp"
#include "core/time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::store {

void note_bad_block(std::vector<BadBlock>& list, const BadBlock& block) {
    if (std::find(list.begin(), list.end(), block) == list.end()) {
        list.push_back(block);
    }
}

std::string bad_blocks_note(const std::vector<BadBlock>& blocks) {
    if (blocks.empty()) {
        return {};
    }
    const BadBlock& b = blocks.front();
    return fmt::format("{} damaged tick block{} left out (block {}, run {}, from {}{}); `gua db "
                       "check` lists them",
                       blocks.size(), blocks.size() == 1 ? " was" : "s were", b.id, b.run_id,
                       format_iso8601(b.t0_us), blocks.size() == 1 ? "" : ", …");
}

std::string block_columns_sql() {
    std::string columns = "id, t0_us, end_us, run_id, n_ticks, tick_us, cards, procs";
    for (std::string_view c : k_stream_columns) {
        columns += fmt::format(", {}", c);
    }
    return columns;
}

void read_block_row(const Statement& st, BlockRow& row) {
    row.id = st.int64(0);
    row.t0_us = st.int64(1);
    row.end_us = st.int64(2);
    row.run_id = st.int64(3);
    row.n_ticks = st.int64(4);
    row.tick_us = st.int64(5);
    row.cards = st.text(6);
    row.procs = st.text(7);
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        row.streams[i] = st.text(8 + static_cast<int>(i));
    }
}

std::uint32_t ProcessIdentities::identity_of(std::int64_t process_id) {
    const auto index = static_cast<std::size_t>(process_id);
    if (process_id < 0) {
        return 0;
    }
    if (index >= m_identity.size()) {
        m_identity.clear();
        Statement st = m_db.prepare("SELECT id, identity_id FROM process ORDER BY id");
        while (st.step()) {
            const auto id = static_cast<std::size_t>(st.int64(0));
            if (m_identity.size() <= id) {
                m_identity.resize(id + 1, 0);
            }
            m_identity[id] = static_cast<std::uint32_t>(st.int64(1));
        }
        if (index >= m_identity.size()) {
            m_identity.resize(index + 1, 0);
        }
    }
    return m_identity[index];
}

void to_audit(const DecodedTicks& ticks, const StoredCardTick& tick, ProcessIdentities& identities,
              audit::CardTick& out) {
    out.gpu = static_cast<std::uint32_t>(tick.gpu_id);
    out.t0 = tick.t0;
    out.duration_us = tick.duration_us;
    out.active_us = tick.active_us;
    out.bucket_us = tick.bucket_us;
    out.util_pct = tick.util_pct;
    out.util_source = tick.util_source;
    out.unmeasured_us = tick.unmeasured_us;
    out.idle_unlisted_us = tick.idle_unlisted_us;
    out.idle_unknown_us = tick.idle_unknown_us;
    out.readings = tick.readings;
    out.allocation = tick.allocation;
    out.allocations.clear(); // owners come from the allocation tables (Reader)
    out.processes.clear();
    for (std::uint32_t i = 0; i < tick.proc_count; ++i) {
        const StoredProc& p = ticks.procs[tick.proc_begin + i];
        out.processes.push_back(audit::ProcTick{identities.identity_of(p.process_id), p.type,
                                                p.mem_used_mib, p.sm_util_pct, p.active_us,
                                                p.idle_held_us});
    }
}

namespace {

/// A percentage as stored in 0.01 % (negative: 0; not finite: unknown).
void round_centi(std::optional<double>& pct) {
    if (!pct) {
        return;
    }
    if (!std::isfinite(*pct)) {
        pct.reset();
        return;
    }
    pct = static_cast<double>(std::max<long long>(std::llround(*pct * 100.0), 0)) / 100.0;
}

} // namespace

void round_as_stored(audit::CardTick& tick) {
    round_centi(tick.util_pct);
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        std::optional<std::int64_t>& v = tick.readings.*f.value;
        if (!v) {
            continue;
        }
        std::int64_t q = quantised(*v, f.quantum);
        if (f.base == telemetry::StoredBase::none) {
            q = std::max<std::int64_t>(q, 0); // stored unsigned
        }
        std::int64_t rounded = 0;
        if (__builtin_mul_overflow(q, f.quantum, &rounded)) {
            v.reset();
        } else {
            v = rounded;
        }
    }
    for (audit::ProcTick& p : tick.processes) {
        round_centi(p.sm_util_pct);
        if (p.mem_used_mib) {
            p.mem_used_mib = std::max<std::int64_t>(*p.mem_used_mib, 0);
        }
    }
}

BlockScanner::BlockScanner(Database& db, CardFieldSet fields)
    : m_db(db), m_blocks(db.prepare(fmt::format("SELECT {} FROM tick_block WHERE t0_us >= ? AND "
                                                "t0_us < ? ORDER BY t0_us, id",
                                                block_columns_sql()))),
      m_starts(db.prepare("SELECT id, t0_us, n_ticks, tick_us, t0_delta, dur_delta FROM "
                          "tick_block WHERE t0_us >= ? AND t0_us < ? ORDER BY t0_us, id")),
      m_decoder(fields) {}

void BlockScanner::load_bounds(std::int64_t hour, TimeUs to) {
    m_bounds.clear();
    m_next_bound = 0;
    m_starts.bind(1, std::int64_t{hour * k_us_per_hour});
    m_starts.bind(2, std::int64_t{std::min(to, (hour + 1) * k_us_per_hour)});
    try {
        while (m_starts.step()) {
            // A block whose timing does not decode holds everything back to its hour's start;
            // the decoder then leaves it out.
            const TimeUs earliest =
                earliest_tick_start(m_starts.int64(1), m_starts.int64(2), m_starts.int64(3),
                                    m_starts.text(4), m_starts.text(5))
                    .value_or(hour * k_us_per_hour);
            m_bounds.emplace_back(m_starts.int64(0), earliest);
        }
    } catch (...) {
        m_starts.reset();
        throw;
    }
    m_starts.reset();
    for (std::size_t i = m_bounds.size(); i-- > 1;) {
        m_bounds[i - 1].second = std::min(m_bounds[i - 1].second, m_bounds[i].second);
    }
}

void BlockScanner::pass_on(std::size_t sorted, TimeUs bound,
                           const std::function<void(const DecodedTicks&)>& fn) {
    std::vector<StoredCardTick>& ticks = m_pending.ticks;
    if (ticks.empty()) {
        return;
    }
    const auto before = [](const StoredCardTick& a, const StoredCardTick& b) {
        return a.t0 != b.t0 ? a.t0 < b.t0 : a.gpu_id < b.gpu_id;
    };
    // The kept-back ticks are sorted; sorting the new ones and merging is a stable sort of all.
    const auto mid = ticks.begin() + static_cast<std::ptrdiff_t>(std::min(sorted, ticks.size()));
    if (!std::is_sorted(mid, ticks.end(), before)) {
        std::stable_sort(mid, ticks.end(), before);
    }
    if (mid != ticks.begin() && mid != ticks.end() && before(*mid, *(mid - 1))) {
        std::inplace_merge(ticks.begin(), mid, ticks.end(), before);
    }
    const auto split = std::partition_point(ticks.begin(), ticks.end(),
                                            [&](const StoredCardTick& t) { return t.t0 < bound; });
    if (split == ticks.end()) { // the common case: every pending tick goes
        fn(m_pending);
        m_pending.clear();
        return;
    }
    if (split == ticks.begin()) {
        return;
    }
    m_out.clear();
    m_rest.clear();
    for (auto it = ticks.begin(); it != ticks.end(); ++it) {
        DecodedTicks& to = it < split ? m_out : m_rest;
        StoredCardTick copy = *it;
        copy.proc_begin = static_cast<std::uint32_t>(to.procs.size());
        to.procs.insert(to.procs.end(), m_pending.procs.begin() + it->proc_begin,
                        m_pending.procs.begin() + it->proc_begin + it->proc_count);
        to.ticks.push_back(copy);
    }
    std::swap(m_pending, m_rest);
    fn(m_out);
}

void BlockScanner::scan(TimeUs from, TimeUs to,
                        const std::function<void(const DecodedTicks&)>& fn) {
    from = std::clamp(from, k_time_min, k_time_max);
    to = std::clamp(to, k_time_min, k_time_max);
    if (from >= to) {
        return;
    }
    ReadTransaction snapshot(m_db); // the bounds and the blocks come from one snapshot
    m_pending.clear();
    m_blocks.bind(1, std::int64_t{hour_of(from) * k_us_per_hour});
    m_blocks.bind(2, std::int64_t{to});
    std::optional<std::int64_t> hour;
    try {
        while (m_blocks.step()) {
            read_block_row(m_blocks, m_row);
            const std::int64_t h = hour_of(m_row.t0_us);
            if (h != hour) {
                pass_on(m_pending.ticks.size(), k_time_max, fn); // all of the previous hour
                hour = h;
                load_bounds(h, to);
            }
            const std::size_t first = m_pending.ticks.size();
            if (m_decoder.decode(m_row, m_pending)) {
                const auto outside = [&](const StoredCardTick& t) {
                    return t.t0 < from || t.t0 >= to;
                };
                m_pending.ticks.erase(
                    std::remove_if(m_pending.ticks.begin() + static_cast<std::ptrdiff_t>(first),
                                   m_pending.ticks.end(), outside),
                    m_pending.ticks.end());
            } else { // leaves m_pending as it was
                note_bad_block(m_bad, BadBlock{m_row.id, m_row.run_id, m_row.t0_us});
            }
            // Ticks starting before every later block's earliest tick are final. A block the
            // bounds do not list (impossible in one snapshot) holds all back to the hour's end.
            TimeUs bound = k_time_min;
            if (m_next_bound < m_bounds.size() && m_bounds[m_next_bound].first == m_row.id) {
                ++m_next_bound;
                bound = m_next_bound < m_bounds.size() ? m_bounds[m_next_bound].second
                                                       : (h + 1) * k_us_per_hour;
            } else {
                m_next_bound = m_bounds.size() + 1;
            }
            pass_on(first, bound, fn);
        }
        pass_on(m_pending.ticks.size(), k_time_max, fn);
    } catch (...) {
        m_blocks.reset();
        m_pending.clear(); // never carried into the next scan
        throw;
    }
    m_blocks.reset();
}

} // namespace gua::store

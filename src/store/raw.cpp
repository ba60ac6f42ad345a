// Block scanning: one ordered range query, blocks grouped by the hour of their first tick (a block
// never spans hours), decoded, filtered to the window and sorted.
#include "store/raw.hpp"

#include "core/fatal.hpp"
#include "core/time.hpp"

#include <fmt/format.h>

#include <algorithm>

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
    out.processes.clear();
    for (std::uint32_t i = 0; i < tick.proc_count; ++i) {
        const StoredProc& p = ticks.procs[tick.proc_begin + i];
        out.processes.push_back(audit::ProcTick{identities.identity_of(p.process_id), p.type,
                                                p.mem_used_mib, p.sm_util_pct, p.active_us});
    }
}

BlockScanner::BlockScanner(Database& db)
    : m_db(db), m_blocks(db.prepare(fmt::format("SELECT {} FROM tick_block WHERE t0_us >= ? AND "
                                                "t0_us < ? ORDER BY t0_us, id",
                                                block_columns_sql()))) {}

void BlockScanner::scan(TimeUs from, TimeUs to,
                        const std::function<void(const DecodedTicks&)>& fn) {
    from = std::clamp(from, k_time_min, k_time_max);
    to = std::clamp(to, k_time_min, k_time_max);
    if (from >= to) {
        return;
    }
    m_hour.clear();
    const auto flush = [&] {
        m_window.clear();
        for (const StoredCardTick& t : m_hour.ticks) {
            if (t.t0 < from || t.t0 >= to) {
                continue;
            }
            StoredCardTick copy = t;
            copy.proc_begin = static_cast<std::uint32_t>(m_window.procs.size());
            m_window.procs.insert(m_window.procs.end(), m_hour.procs.begin() + t.proc_begin,
                                  m_hour.procs.begin() + t.proc_begin + t.proc_count);
            m_window.ticks.push_back(copy);
        }
        const auto before = [](const StoredCardTick& a, const StoredCardTick& b) {
            return a.t0 != b.t0 ? a.t0 < b.t0 : a.gpu_id < b.gpu_id;
        };
        if (!std::is_sorted(m_window.ticks.begin(), m_window.ticks.end(), before)) {
            std::stable_sort(m_window.ticks.begin(), m_window.ticks.end(), before);
        }
        if (!m_window.ticks.empty()) {
            fn(m_window);
        }
        m_hour.clear();
    };
    m_blocks.bind(1, std::int64_t{hour_of(from) * k_us_per_hour});
    m_blocks.bind(2, std::int64_t{to});
    std::int64_t hour = 0;
    bool any = false;
    try {
        while (m_blocks.step()) {
            read_block_row(m_blocks, m_row);
            const std::int64_t h = hour_of(m_row.t0_us);
            if (any && h != hour) {
                flush();
            }
            hour = h;
            any = true;
            if (!decode_block(m_row, m_hour)) { // leaves m_hour as it was
                note_bad_block(m_bad, BadBlock{m_row.id, m_row.run_id, m_row.t0_us});
            }
        }
    } catch (...) {
        m_blocks.reset();
        m_hour.clear(); // never carried into the next scan
        throw;
    }
    m_blocks.reset();
    if (any) {
        flush();
    }
}

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// The write path: dimension upserts (cached), tick blocks rewritten in place as they grow, and
// rollups of hours that the writer has moved past.
#include "store/writer.hpp"

#include "core/version.hpp"
#include "store/raw.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>

namespace gua::store {

namespace {

bool same_device(const telemetry::DeviceInfo& a, const telemetry::DeviceInfo& b) {
    return a.index == b.index && a.name == b.name && a.memory_total_mib == b.memory_total_mib &&
           a.pci_bus_id == b.pci_bus_id && a.parent_uuid == b.parent_uuid;
}

std::string stream_assignments() {
    std::string out;
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        out += fmt::format(", {} = ?{}", k_stream_columns[i], 4 + i);
    }
    return out;
}

void bind_stream(Statement& st, int index, const std::string& text) {
    if (text.empty()) {
        st.bind_null(index);
    } else {
        st.bind_static(index, text); // the block's stream outlives the statement's run()
    }
}

} // namespace

Writer::Writer(Database& db, const audit::Thresholds& thresholds)
    : m_db(db), m_thresholds(thresholds),
      m_insert_block(db.prepare(fmt::format(
          "INSERT INTO tick_block (id, t0_us, end_us, run_id, n_ticks, tick_us, cards, procs, {}) "
          "VALUES (-?3, ?1, ?2, ?3, ?4, ?5, ?6, ?7{})",
          [] {
              std::string columns;
              for (std::size_t i = 0; i < k_stream_count; ++i) {
                  columns += fmt::format("{}{}", i == 0 ? "" : ", ", k_stream_columns[i]);
              }
              return columns;
          }(),
          [] {
              std::string out;
              for (std::size_t i = 0; i < k_stream_count; ++i) {
                  out += fmt::format(", ?{}", 8 + i);
              }
              return out;
          }()))),
      m_update_block(
          db.prepare(fmt::format("UPDATE tick_block SET end_us = ?2, n_ticks = ?3{} WHERE id = ?1",
                                 stream_assignments()))),
      m_close_block(db.prepare("UPDATE tick_block SET id = (SELECT coalesce(max(id), 0) + 1 FROM "
                               "tick_block WHERE id > 0) WHERE id = ?")),
      m_rollups(db), m_allocations(db) {}

Writer::Writer(Database& db, std::int64_t run_id, const audit::Thresholds& thresholds)
    : Writer(db, thresholds) {
    m_run_id = run_id;
}

Writer::Writer(Database& db, const RunInfo& run)
    : Writer(db,
             audit::Thresholds{run.active_threshold_pct, run.held_mib, run.graphics_is_holder}) {
    Transaction tx(m_db);
    Statement st = m_db.prepare("INSERT INTO run (host, driver_version, source, gua_version, "
                                "interval_us, active_threshold_pct, held_mib, graphics_is_holder, "
                                "started_us) VALUES (?,?,?,?,?,?,?,?,?)");
    st.bind(1, run.host);
    st.bind(2, run.driver_version);
    st.bind(3, run.source);
    st.bind(4, std::string_view(k_version));
    st.bind(5, std::int64_t{run.interval_us});
    st.bind(6, run.active_threshold_pct);
    st.bind(7, std::int64_t{run.held_mib});
    st.bind(8, std::int64_t{run.graphics_is_holder ? 1 : 0});
    st.bind(9, std::int64_t{run.started_us});
    st.run();
    m_run_id = m_db.scalar("SELECT last_insert_rowid()");
    // Open blocks of runs that ended without finish() become ordinary closed blocks.
    Statement open = m_db.prepare("SELECT id FROM tick_block WHERE id < 0 ORDER BY id DESC");
    std::vector<std::int64_t> orphans;
    while (open.step()) {
        orphans.push_back(open.int64(0));
    }
    for (std::int64_t id : orphans) {
        m_close_block.bind(1, id);
        m_close_block.run();
    }
    tx.commit();
}

std::int64_t Writer::gpu_id(const telemetry::DeviceInfo& device) {
    auto it = m_gpus.find(device.uuid);
    if (it != m_gpus.end() && same_device(it->second.second, device)) {
        return it->second.first;
    }
    if (!device.replaces.empty() && it == m_gpus.end()) {
        // The card a stand-in waited for: its row (and the unmeasured time recorded under it)
        // becomes this card's, unless the card already has a row of its own.
        Statement adopt = m_db.prepare("UPDATE gpu SET uuid = ?1 WHERE uuid = ?2 AND NOT EXISTS "
                                       "(SELECT 1 FROM gpu WHERE uuid = ?1)");
        adopt.bind(1, device.uuid);
        adopt.bind(2, device.replaces);
        adopt.run();
        m_gpus.erase(device.replaces);
    }
    Statement st =
        m_db.prepare("INSERT INTO gpu (uuid, idx, name, memory_total_mib, pci_bus_id, parent_uuid) "
                     "VALUES (?1,?2,?3,?4,?5,?6) ON CONFLICT(uuid) DO UPDATE SET idx=?2, name=?3, "
                     "memory_total_mib=?4, pci_bus_id=?5, parent_uuid=?6 RETURNING id");
    st.bind(1, device.uuid);
    st.bind(2, std::int64_t{device.index});
    st.bind(3, device.name);
    st.bind(4, device.memory_total_mib);
    st.bind(5, device.pci_bus_id);
    st.bind(6, device.parent_uuid);
    st.step();
    const std::int64_t id = st.int64(0);
    m_gpus[device.uuid] = {id, device};
    return id;
}

std::int64_t Writer::identity_id(const telemetry::Identity& i) {
    const std::string key =
        fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", i.user,
                    i.uid ? *i.uid : -1LL, i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit,
                    i.jupyter_kernel, i.pod_namespace, i.pod_name, i.container_name);
    if (auto it = m_identities.find(key); it != m_identities.end()) {
        return it->second;
    }
    // NULL-safe lookup first (UNIQUE treats NULL uids as distinct), then insert. The names are
    // not part of the key: a name found later (or a renamed container) updates the row, and a
    // name not found again never blanks it.
    Statement find = m_db.prepare(
        "SELECT id, pod_namespace, pod_name, container_name FROM identity WHERE user = ?1 AND "
        "uid IS ?2 AND container_id = ?3 AND pod_uid = ?4 AND slurm_job = ?5 AND "
        "systemd_unit = ?6 AND jupyter_kernel = ?7 UNION ALL SELECT NULL, '', '', '' LIMIT 1");
    Statement insert = m_db.prepare(
        "INSERT INTO identity (user, uid, container_id, pod_uid, slurm_job, systemd_unit, "
        "jupyter_kernel, pod_namespace, pod_name, container_name) "
        "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) RETURNING id");
    for (Statement* st : {&find, &insert}) {
        st->bind(1, i.user);
        st->bind(2, widen_int(i.uid));
        st->bind(3, i.container_id);
        st->bind(4, i.pod_uid);
        st->bind(5, i.slurm_job);
        st->bind(6, i.systemd_unit);
        st->bind(7, i.jupyter_kernel);
    }
    find.step();
    std::int64_t id = 0;
    if (!find.is_null(0)) {
        id = find.int64(0);
        const std::array<std::string, 3> stored{find.text(1), find.text(2), find.text(3)};
        const std::array<const std::string*, 3> seen{&i.pod_namespace, &i.pod_name,
                                                     &i.container_name};
        bool update = false;
        for (std::size_t k = 0; k < stored.size(); ++k) {
            update = update || (!seen[k]->empty() && *seen[k] != stored[k]);
        }
        if (update) {
            Statement set = m_db.prepare(
                "UPDATE identity SET pod_namespace = CASE WHEN ?1 = '' THEN pod_namespace ELSE "
                "?1 END, pod_name = CASE WHEN ?2 = '' THEN pod_name ELSE ?2 END, "
                "container_name = CASE WHEN ?3 = '' THEN container_name ELSE ?3 END WHERE id = ?4");
            set.bind(1, i.pod_namespace);
            set.bind(2, i.pod_name);
            set.bind(3, i.container_name);
            set.bind(4, id);
            set.run();
        }
    } else {
        insert.bind(8, i.pod_namespace);
        insert.bind(9, i.pod_name);
        insert.bind(10, i.container_name);
        insert.step();
        id = insert.int64(0);
    }
    if (m_identities.size() >= k_max_cached_ids) {
        m_identities.clear();
    }
    m_identities.emplace(key, id);
    return id;
}

std::int64_t Writer::process_id(const telemetry::ProcessTick& p) {
    // Fast path: the same process as last time it was seen (no key formatting per tick).
    const std::pair<std::uint32_t, std::uint64_t> seen{p.pid, p.start_ticks.value_or(~0ULL)};
    if (auto it = m_recent.find(seen); it != m_recent.end() && it->second.identity == p.identity) {
        it->second.tick = m_tick;
        return it->second.id;
    }
    const std::int64_t id = process_id_slow(p);
    m_recent[seen] = Recent{p.identity, id, m_tick};
    return id;
}

std::int64_t Writer::process_id_slow(const telemetry::ProcessTick& p) {
    const std::int64_t identity = identity_id(p.identity);
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", p.pid,
                                        p.start_ticks ? static_cast<long long>(*p.start_ticks) : -1,
                                        p.identity.command, identity);
    if (auto it = m_processes.find(key); it != m_processes.end()) {
        return it->second;
    }
    Statement find = m_db.prepare(
        "SELECT id FROM process WHERE pid = ?1 AND start_ticks IS ?2 AND command = ?3 AND "
        "identity_id = ?4 UNION ALL SELECT NULL LIMIT 1");
    Statement insert = m_db.prepare("INSERT INTO process (pid, start_ticks, command, identity_id) "
                                    "VALUES (?1,?2,?3,?4) RETURNING id");
    for (Statement* st : {&find, &insert}) {
        st->bind(1, std::int64_t{p.pid});
        st->bind(2, widen_int(p.start_ticks));
        st->bind(3, p.identity.command);
        st->bind(4, identity);
    }
    find.step();
    std::int64_t id = 0;
    if (!find.is_null(0)) {
        id = find.int64(0);
    } else {
        insert.step();
        id = insert.int64(0);
    }
    if (m_processes.size() >= k_max_cached_ids) {
        m_processes.clear();
    }
    m_processes.emplace(key, id);
    return id;
}

void Writer::load_pending() {
    if (m_pending_loaded) {
        return;
    }
    for (std::int64_t h : m_rollups.hours_without_rollup()) {
        m_pending_hours.insert(h);
    }
    for (std::int64_t d : m_rollups.days_without_rollup()) {
        m_pending_days.insert(d);
    }
    m_pending_loaded = true;
}

void Writer::enter_hour(std::int64_t hour) {
    if (m_hour == hour) {
        return;
    }
    if (!m_defer_rollups) {
        load_pending();
    }
    m_hour = hour;
    if (m_pending_hours.insert(hour).second) {
        // Drops the hour's rollup if any, and always its day's: the day is re-summed later.
        m_rollups.drop(hour);
    }
}

bool Writer::store_block() {
    const BlockRow& row = m_block.row();
    if (row.id == 0) {
        m_close_block.bind(1, -m_run_id);
        m_close_block.run();
        Statement& st = m_insert_block;
        st.bind(1, std::int64_t{row.t0_us});
        st.bind(2, std::int64_t{row.end_us});
        st.bind(3, row.run_id);
        st.bind(4, row.n_ticks);
        st.bind(5, std::int64_t{row.tick_us});
        st.bind(6, std::string_view(row.cards));
        st.bind(7, std::string_view(row.procs));
        for (std::size_t i = 0; i < k_stream_count; ++i) {
            bind_stream(st, 8 + static_cast<int>(i), m_block.stream(i));
        }
        st.run();
        m_block.set_id(-m_run_id);
        return true;
    }
    Statement& st = m_update_block;
    st.bind(1, row.id);
    st.bind(2, std::int64_t{row.end_us});
    st.bind(3, row.n_ticks);
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        bind_stream(st, 4 + static_cast<int>(i), m_block.stream(i));
    }
    st.run();
    // 0 rows: another writer (an import starting) closed this run's open block as an orphan; what
    // it closed is stored, so the caller starts a new block with the current tick.
    return sqlite3_changes(m_db.handle()) == 1;
}

void Writer::append(const telemetry::Tick& tick) {
    if (tick.cards.empty()) {
        return;
    }
    m_layout.gpus.clear();
    m_layout.procs.clear();
    ++m_tick;
    for (std::size_t slot = 0; slot < tick.cards.size(); ++slot) {
        const telemetry::CardTickRecord& c = tick.cards[slot];
        m_layout.gpus.push_back(gpu_id(c.device));
        for (const telemetry::ProcessTick& p : c.processes) {
            m_layout.procs.push_back(BlockLayout::Proc{
                static_cast<std::int64_t>(slot), process_id(p), static_cast<std::int64_t>(p.type)});
        }
    }
    for (std::size_t slot = 0; slot < tick.cards.size(); ++slot) {
        m_allocations.add(m_run_id, m_layout.gpus[slot], tick.cards[slot].allocations);
    }
    std::erase_if(m_recent, [&](const auto& item) { return item.second.tick != m_tick; });
    const std::int64_t hour = hour_of(tick.t0);
    enter_hour(hour);
    if (m_block.fits(m_layout, tick.t0)) {
        m_block.append(tick);
    } else {
        m_block.start(m_run_id, m_layout, tick);
    }
    if (!store_block()) {
        m_block.start(m_run_id, m_layout, tick);
        store_block();
    }
    m_card_rows += tick.cards.size();
    if (!m_defer_rollups) {
        roll_up_before(hour * k_us_per_hour);
    }
}

void Writer::roll_up_before(TimeUs t) {
    load_pending();
    const std::int64_t limit = hour_of(t);
    while (!m_pending_hours.empty() && *m_pending_hours.begin() < limit) {
        m_rollups.build(*m_pending_hours.begin(), m_thresholds);
        m_pending_days.insert(day_of_hour(*m_pending_hours.begin()));
        m_pending_hours.erase(m_pending_hours.begin());
    }
    while (!m_pending_days.empty() && (*m_pending_days.begin() + 1) * 24 <= limit) {
        m_rollups.build_day(*m_pending_days.begin());
        m_pending_days.erase(m_pending_days.begin());
    }
}

void Writer::write(const telemetry::Tick& tick) {
    try {
        Transaction tx(m_db);
        append(tick);
        tx.commit();
    } catch (...) {
        discard_unsaved();
        throw;
    }
}

void Writer::discard_unsaved() {
    m_block = BlockBuilder{};
    m_pending_loaded = false;
    m_pending_hours.clear();
    m_pending_days.clear();
    m_hour.reset();
    m_gpus.clear();
    m_identities.clear();
    m_processes.clear();
    m_recent.clear();
    m_allocations.forget();
}

void Writer::close_open_block() {
    m_close_block.bind(1, -m_run_id);
    m_close_block.run();
    m_block = BlockBuilder{};
}

void Writer::finish(TimeUs ended_us) {
    Transaction tx(m_db);
    Statement st = m_db.prepare("UPDATE run SET ended_us = ? WHERE id = ?");
    st.bind(1, std::int64_t{ended_us});
    st.bind(2, m_run_id);
    st.run();
    m_close_block.bind(1, -m_run_id);
    m_close_block.run();
    tx.commit();
    m_block = BlockBuilder{};
}

} // namespace gua::store

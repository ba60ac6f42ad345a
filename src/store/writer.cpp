// The write path: dimension upserts (cached) and one transaction per tick.
#include "store/writer.hpp"

#include "core/version.hpp"

#include <fmt/format.h>

namespace gua::store {

namespace {

bool same_device(const telemetry::DeviceInfo& a, const telemetry::DeviceInfo& b) {
    return a.index == b.index && a.name == b.name && a.memory_total_mib == b.memory_total_mib &&
           a.pci_bus_id == b.pci_bus_id && a.parent_uuid == b.parent_uuid;
}

template <typename T> std::optional<std::int64_t> widen(const std::optional<T>& v) {
    if (!v) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(*v);
}

} // namespace

Writer::Writer(Database& db, const RunInfo& run)
    : m_db(db),
      m_insert_card(db.prepare(
          "INSERT OR REPLACE INTO card_tick (t0_us, gpu_id, run_id, duration_us, util_source, "
          "util_pct, active_us, idle_us, underutilized_us, productive_us, compute_bound_us, "
          "mem_util_pct, mem_used_mib, power_mw, temperature_c, sm_clock_mhz, clock_events, "
          "read_errors) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      m_insert_proc(db.prepare("INSERT OR REPLACE INTO proc_tick (t0_us, gpu_id, process_id, "
                               "type, mem_used_mib, sm_util_pct) VALUES (?,?,?,?,?,?)")) {
    Transaction tx(m_db);
    Statement st = m_db.prepare("INSERT INTO run (host, driver_version, source, gua_version, "
                                "interval_us, active_threshold_pct, started_us) "
                                "VALUES (?,?,?,?,?,?,?)");
    st.bind(1, run.host);
    st.bind(2, run.driver_version);
    st.bind(3, run.source);
    st.bind(4, std::string_view(k_version));
    st.bind(5, std::int64_t{run.interval_us});
    st.bind(6, run.active_threshold_pct);
    st.bind(7, std::int64_t{run.started_us});
    st.run();
    m_run_id = m_db.scalar("SELECT last_insert_rowid()");
    tx.commit();
}

std::int64_t Writer::gpu_id(const telemetry::DeviceInfo& device) {
    auto it = m_gpus.find(device.uuid);
    if (it != m_gpus.end() && same_device(it->second.second, device)) {
        return it->second.first;
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
        fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", i.user, i.uid ? *i.uid : -1LL,
                    i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel);
    if (auto it = m_identities.find(key); it != m_identities.end()) {
        return it->second;
    }
    // NULL-safe lookup first (UNIQUE treats NULL uids as distinct), then insert.
    Statement find = m_db.prepare(
        "SELECT id FROM identity WHERE user = ?1 AND uid IS ?2 AND container_id = ?3 AND "
        "pod_uid = ?4 AND slurm_job = ?5 AND systemd_unit = ?6 AND jupyter_kernel = ?7 "
        "UNION ALL SELECT NULL LIMIT 1");
    Statement insert = m_db.prepare(
        "INSERT INTO identity (user, uid, container_id, pod_uid, slurm_job, systemd_unit, "
        "jupyter_kernel) VALUES (?1,?2,?3,?4,?5,?6,?7) RETURNING id");
    for (Statement* st : {&find, &insert}) {
        st->bind(1, i.user);
        st->bind(2, widen(i.uid));
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
    } else {
        insert.step();
        id = insert.int64(0);
    }
    m_identities.emplace(key, id);
    return id;
}

std::int64_t Writer::process_id(const telemetry::ProcessTick& p) {
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
        st->bind(2, widen(p.start_ticks));
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
    m_processes.emplace(key, id);
    return id;
}

void Writer::write(const telemetry::Tick& tick) {
    Transaction tx(m_db);
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const std::int64_t gpu = gpu_id(c.device);
        Statement& st = m_insert_card;
        st.bind(1, std::int64_t{tick.t0});
        st.bind(2, gpu);
        st.bind(3, m_run_id);
        st.bind(4, std::int64_t{tick.duration_us});
        st.bind(5, static_cast<std::int64_t>(c.util_source));
        st.bind(6, c.util_pct);
        st.bind(7, widen(c.active_us));
        for (int b = 0; b < 4; ++b) {
            st.bind(8 + b, std::int64_t{c.bucket_us[static_cast<std::size_t>(b)]});
        }
        st.bind(12, widen(c.mem_util_pct));
        st.bind(13, c.mem_used_mib);
        st.bind(14, c.power_mw);
        st.bind(15, widen(c.temperature_c));
        st.bind(16, widen(c.sm_clock_mhz));
        st.bind(17, widen(c.clock_event_reasons));
        st.bind(18, std::int64_t{c.read_errors});
        st.run();
        ++m_card_rows;
        for (const telemetry::ProcessTick& p : c.processes) {
            Statement& ps = m_insert_proc;
            ps.bind(1, std::int64_t{tick.t0});
            ps.bind(2, gpu);
            ps.bind(3, process_id(p));
            ps.bind(4, static_cast<std::int64_t>(p.type));
            ps.bind(5, p.mem_used_mib);
            ps.bind(6, p.sm_util_pct);
            ps.run();
        }
    }
    tx.commit();
}

void Writer::finish(TimeUs ended_us) {
    Statement st = m_db.prepare("UPDATE run SET ended_us = ? WHERE id = ?");
    st.bind(1, std::int64_t{ended_us});
    st.bind(2, m_run_id);
    st.run();
}

} // namespace gua::store

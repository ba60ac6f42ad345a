// Read path: dimensions, and a merge of card_tick and proc_tick rows in (t0, gpu) order.
#include "store/reader.hpp"

#include <algorithm>

namespace gua::store {

std::vector<RunRow> Reader::runs() {
    std::vector<RunRow> out;
    Statement st = m_db.prepare("SELECT id, host, driver_version, source, gua_version, "
                                "interval_us, active_threshold_pct, started_us, ended_us "
                                "FROM run ORDER BY id");
    while (st.step()) {
        out.push_back(RunRow{st.int64(0), st.text(1), st.text(2), st.text(3), st.text(4),
                             st.int64(5), st.real(6), st.int64(7), st.opt_int64(8)});
    }
    return out;
}

std::vector<GpuRow> Reader::gpus() {
    std::vector<GpuRow> out;
    Statement st = m_db.prepare(
        "SELECT id, uuid, idx, name, memory_total_mib, parent_uuid FROM gpu ORDER BY idx, uuid");
    while (st.step()) {
        out.push_back(GpuRow{st.int64(0), st.text(1), static_cast<int>(st.int64(2)), st.text(3),
                             st.opt_int64(4), st.text(5)});
    }
    return out;
}

std::vector<IdentityRow> Reader::identities() {
    std::vector<IdentityRow> out;
    Statement st = m_db.prepare("SELECT i.id, i.user, i.uid, i.container_id, i.pod_uid, "
                                "i.slurm_job, i.systemd_unit, i.jupyter_kernel FROM identity i "
                                "ORDER BY i.id");
    while (st.step()) {
        IdentityRow row;
        row.id = st.int64(0);
        row.identity.user = st.text(1);
        if (auto uid = st.opt_int64(2)) {
            row.identity.uid = static_cast<std::uint32_t>(*uid);
        }
        row.identity.container_id = st.text(3);
        row.identity.pod_uid = st.text(4);
        row.identity.slurm_job = st.text(5);
        row.identity.systemd_unit = st.text(6);
        row.identity.jupyter_kernel = st.text(7);
        out.push_back(std::move(row));
    }
    return out;
}

std::optional<std::pair<TimeUs, TimeUs>> Reader::span() {
    Statement st = m_db.prepare("SELECT min(t0_us), max(t0_us) FROM card_tick");
    if (!st.step() || st.is_null(0)) {
        return std::nullopt;
    }
    return std::pair<TimeUs, TimeUs>{st.int64(0), st.int64(1)};
}

void Reader::scan(TimeUs from, TimeUs to, const std::function<void(const audit::CardTick&)>& fn) {
    Statement cards = m_db.prepare(
        "SELECT t0_us, gpu_id, duration_us, active_us, idle_us, underutilized_us, productive_us, "
        "compute_bound_us, util_pct FROM card_tick WHERE t0_us >= ? AND t0_us < ? "
        "ORDER BY t0_us, gpu_id");
    Statement procs = m_db.prepare(
        "SELECT p.t0_us, p.gpu_id, pr.identity_id, p.type, p.mem_used_mib, p.sm_util_pct "
        "FROM proc_tick p JOIN process pr ON pr.id = p.process_id "
        "WHERE p.t0_us >= ? AND p.t0_us < ? ORDER BY p.t0_us, p.gpu_id");
    audit::CardTick tick;
    const auto span_hint = span();
    TimeUs start = span_hint ? std::max(from, span_hint->first) : to;
    const TimeUs stop = span_hint ? std::min(to, span_hint->second + 1) : from;
    while (start < stop) {
        const TimeUs end = std::min(stop, start + k_us_per_day);
        m_db.exec("BEGIN");
        cards.bind(1, std::int64_t{start});
        cards.bind(2, std::int64_t{end});
        procs.bind(1, std::int64_t{start});
        procs.bind(2, std::int64_t{end});
        bool have_proc = procs.step();
        while (cards.step()) {
            tick.t0 = cards.int64(0);
            const std::int64_t gpu = cards.int64(1);
            tick.gpu = static_cast<std::uint32_t>(gpu);
            tick.duration_us = cards.int64(2);
            tick.active_us = cards.opt_int64(3);
            for (int b = 0; b < 4; ++b) {
                tick.bucket_us[static_cast<std::size_t>(b)] = cards.int64(4 + b);
            }
            tick.util_pct = cards.opt_real(8);
            tick.processes.clear();
            while (have_proc && (procs.int64(0) < tick.t0 ||
                                 (procs.int64(0) == tick.t0 && procs.int64(1) < gpu))) {
                have_proc = procs.step();
            }
            while (have_proc && procs.int64(0) == tick.t0 && procs.int64(1) == gpu) {
                audit::ProcTick p;
                p.identity = static_cast<std::uint32_t>(procs.int64(2));
                p.type = static_cast<telemetry::ProcessType>(procs.int64(3));
                p.mem_used_mib = procs.opt_int64(4);
                p.sm_util_pct = procs.opt_real(5);
                tick.processes.push_back(p);
                have_proc = procs.step();
            }
            fn(tick);
        }
        cards.reset();
        procs.reset();
        m_db.exec("COMMIT");
        start = end;
    }
}

} // namespace gua::store

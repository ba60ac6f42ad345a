// SPDX-License-Identifier: Apache-2.0
// The fault table: insert (kernel log records once per boot), range read, counters.
#include "store/faults.hpp"

#include <nlohmann/json.hpp>

namespace gua::store {

namespace {

std::string holders_json(const std::vector<telemetry::FaultHolder>& holders) {
    nlohmann::json out = nlohmann::json::array();
    for (const telemetry::FaultHolder& h : holders) {
        nlohmann::json one = {{"pid", h.pid}, {"command", h.process_name}};
        if (h.identity) {
            one["user"] = h.identity->user;
            one["job"] = h.identity->slurm_job;
            one["pod"] = h.identity->pod_name.empty()
                             ? h.identity->pod_uid
                             : h.identity->pod_namespace + "/" + h.identity->pod_name;
        }
        out.push_back(std::move(one));
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<telemetry::FaultHolder> holders_of(const std::string& text) {
    std::vector<telemetry::FaultHolder> out;
    const nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
    if (!list.is_array()) {
        return out;
    }
    for (const nlohmann::json& one : list) {
        if (!one.is_object()) {
            continue;
        }
        telemetry::FaultHolder h;
        h.pid = one.value("pid", 0U);
        h.process_name = one.value("command", std::string{});
        if (one.contains("user")) {
            telemetry::Identity id;
            id.user = one.value("user", std::string{"unknown"});
            id.command = h.process_name;
            id.slurm_job = one.value("job", std::string{});
            id.pod_name = one.value("pod", std::string{});
            h.identity = std::move(id);
        }
        out.push_back(std::move(h));
    }
    return out;
}

/// False for a file older than schema 16 (read without migrating it): no faults, not an error.
bool has_fault_table(Database& db) {
    return db.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                     "name = 'fault_event'") > 0;
}

} // namespace

std::vector<bool> insert_faults(Database& db, std::int64_t run_id,
                                const std::vector<telemetry::FaultEvent>& events) {
    std::vector<bool> stored;
    if (events.empty()) {
        return stored;
    }
    Transaction tx(db);
    Statement st = db.prepare(
        "INSERT OR IGNORE INTO fault_event (run_id, gpu_uuid, pci_bus_id, at_us, xid, sources, "
        "pid, process_name, gpu_instance_id, compute_instance_id, message, holders, boot_id, "
        "kmsg_seq) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");
    for (const telemetry::FaultEvent& e : events) {
        st.reset();
        st.bind(1, run_id);
        st.bind(2, e.uuid);
        st.bind(3, e.pci_bus_id);
        st.bind(4, std::int64_t{e.at_us});
        st.bind(5, std::int64_t{e.xid});
        st.bind(6, static_cast<std::int64_t>(e.sources));
        st.bind(7, widen_int(e.pid));
        st.bind(8, e.process_name);
        st.bind(9, widen_int(e.gpu_instance));
        st.bind(10, widen_int(e.compute_instance));
        st.bind(11, e.message);
        st.bind(12, holders_json(e.holders));
        if (e.kmsg_seq) {
            st.bind(13, e.boot_id);
            st.bind(14, static_cast<std::int64_t>(*e.kmsg_seq));
        } else {
            st.bind_null(13);
            st.bind_null(14);
        }
        st.run();
        stored.push_back(db.scalar("SELECT changes()") > 0);
    }
    tx.commit();
    return stored;
}

std::vector<telemetry::FaultEvent> read_faults(Database& db, TimeUs from, TimeUs to) {
    if (!has_fault_table(db)) {
        return {};
    }
    Statement st = db.prepare(
        "SELECT gpu_uuid, pci_bus_id, at_us, xid, sources, pid, process_name, gpu_instance_id, "
        "compute_instance_id, message, holders, boot_id, kmsg_seq FROM fault_event "
        "WHERE at_us >= ?1 AND at_us < ?2 ORDER BY at_us, id");
    st.bind(1, std::int64_t{from});
    st.bind(2, std::int64_t{to});
    std::vector<telemetry::FaultEvent> out;
    while (st.step()) {
        telemetry::FaultEvent e;
        e.uuid = st.text(0);
        e.pci_bus_id = st.text(1);
        e.at_us = st.int64(2);
        e.xid = static_cast<int>(st.int64(3));
        e.sources = static_cast<unsigned>(st.int64(4));
        e.pid = narrow_int<std::uint32_t>(st.opt_int64(5));
        e.process_name = st.text(6);
        e.gpu_instance = narrow_int<unsigned>(st.opt_int64(7));
        e.compute_instance = narrow_int<unsigned>(st.opt_int64(8));
        e.message = st.text(9);
        e.holders = holders_of(st.text(10));
        e.boot_id = st.is_null(11) ? std::string{} : st.text(11);
        if (const auto seq = st.opt_int64(12)) {
            e.kmsg_seq = static_cast<std::uint64_t>(*seq);
        }
        out.push_back(std::move(e));
    }
    return out;
}

std::optional<std::uint64_t> last_kmsg_seq(Database& db, const std::string& boot_id) {
    Statement st = db.prepare("SELECT max(kmsg_seq) FROM fault_event WHERE boot_id = ?1");
    st.bind(1, boot_id);
    st.step();
    const auto seq = st.opt_int64(0);
    return seq ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*seq)) : std::nullopt;
}

std::map<std::pair<std::string, int>, std::uint64_t> fault_counts(Database& db) {
    std::map<std::pair<std::string, int>, std::uint64_t> out;
    if (!has_fault_table(db)) {
        return out;
    }
    // Driver codes only: gua's own record of a GPU missing from NVML (a negative code,
    // faults::k_gpu_missing_code) is no Xid and has no counter.
    Statement st =
        db.prepare("SELECT gpu_uuid, xid, count(*) FROM fault_event WHERE xid >= 0 GROUP BY 1, 2");
    while (st.step()) {
        out[{st.text(0), static_cast<int>(st.int64(1))}] = static_cast<std::uint64_t>(st.int64(2));
    }
    return out;
}

} // namespace gua::store

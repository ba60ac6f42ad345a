// SPDX-License-Identifier: Apache-2.0
// policy_decision reads and writes.
#include "store/policy_log.hpp"

namespace gua::store {

namespace {

constexpr const char* k_columns =
    "time_us, rule, action, dry_run, verdict, outcome, pid, start_ticks, user, uid, command, "
    "container_id, gpu_uuid, gpu_index, memory_mib, idle_us, reclaimed_gib_hours, detail, "
    "updated_us";

} // namespace

bool has_policy_log(Database& db) {
    return db.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                     "name = 'policy_decision'") > 0;
}

DecisionLog::DecisionLog(Database& db)
    : m_db(db), m_insert(db.prepare(std::string("INSERT INTO policy_decision (") + k_columns +
                                    ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      m_update(db.prepare("UPDATE policy_decision SET outcome = ?, detail = ?, "
                          "reclaimed_gib_hours = ?, updated_us = ? WHERE id = ?")) {}

std::int64_t DecisionLog::insert(const DecisionRow& r) {
    Statement& st = m_insert;
    st.bind(1, std::int64_t{r.time_us});
    st.bind(2, r.rule);
    st.bind(3, r.action);
    st.bind(4, std::int64_t{r.dry_run ? 1 : 0});
    st.bind(5, r.verdict);
    st.bind(6, r.outcome);
    st.bind(7, std::int64_t{r.pid});
    st.bind(8, widen_int(r.start_ticks));
    st.bind(9, r.user);
    st.bind(10, widen_int(r.uid));
    st.bind(11, r.command);
    st.bind(12, r.container_id);
    st.bind(13, r.gpu_uuid);
    st.bind(14, r.gpu_index);
    st.bind(15, r.memory_mib);
    st.bind(16, std::int64_t{r.idle_us});
    st.bind(17, r.reclaimed_gib_hours);
    st.bind(18, r.detail);
    st.bind(19, std::int64_t{r.updated_us});
    st.run();
    return m_db.scalar("SELECT last_insert_rowid()");
}

void DecisionLog::update(std::int64_t id, const std::string& outcome, const std::string& detail,
                         double reclaimed_gib_hours, TimeUs at) {
    m_update.bind(1, outcome);
    m_update.bind(2, detail);
    m_update.bind(3, reclaimed_gib_hours);
    m_update.bind(4, std::int64_t{at});
    m_update.bind(5, id);
    m_update.run();
}

std::vector<DecisionRow> read_decisions(Database& db, TimeUs from, TimeUs to) {
    std::vector<DecisionRow> out;
    if (!has_policy_log(db)) {
        return out;
    }
    Statement st = db.prepare(std::string("SELECT id, ") + k_columns +
                              " FROM policy_decision WHERE time_us >= ? AND time_us < ? "
                              "ORDER BY time_us, id");
    st.bind(1, std::int64_t{from});
    st.bind(2, std::int64_t{to});
    while (st.step()) {
        DecisionRow r;
        r.id = st.int64(0);
        r.time_us = st.int64(1);
        r.rule = st.text(2);
        r.action = st.text(3);
        r.dry_run = st.int64(4) != 0;
        r.verdict = st.text(5);
        r.outcome = st.text(6);
        r.pid = static_cast<std::uint32_t>(st.int64(7));
        if (const auto start = st.opt_int64(8)) {
            r.start_ticks = static_cast<std::uint64_t>(*start);
        }
        r.user = st.text(9);
        if (const auto uid = st.opt_int64(10)) {
            r.uid = static_cast<std::uint32_t>(*uid);
        }
        r.command = st.text(11);
        r.container_id = st.text(12);
        r.gpu_uuid = st.text(13);
        r.gpu_index = st.text(14);
        r.memory_mib = st.opt_int64(15);
        r.idle_us = st.int64(16);
        r.reclaimed_gib_hours = st.real(17);
        r.detail = st.text(18);
        r.updated_us = st.int64(19);
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace gua::store

// Recent-state queries: newest card-ticks, streak rewinding and recent state times.
#include "store/recent.hpp"

#include "audit/idle_held.hpp"

#include <algorithm>
#include <exception>

namespace gua::store {

namespace {

/// A read transaction that always ends (a report never holds one open for long).
class ReadSnapshot {
  public:
    explicit ReadSnapshot(Database& db) : m_db(db) { m_db.exec("BEGIN"); }
    ~ReadSnapshot() {
        try {
            m_db.exec("COMMIT");
        } catch (const std::exception&) { // nothing was written; the connection rolls back
        }
    }
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  private:
    Database& m_db;
};

template <typename T> std::optional<T> narrow(const std::optional<std::int64_t>& v) {
    if (!v) {
        return std::nullopt;
    }
    return static_cast<T>(*v);
}

RecentCard card_from_row(const Statement& st) {
    RecentCard c;
    c.t0 = st.int64(0);
    c.gpu_id = st.int64(1);
    c.duration_us = st.int64(2);
    telemetry::CardTickRecord& r = c.record;
    r.util_source = static_cast<telemetry::UtilSource>(st.int64(3));
    r.util_pct = st.opt_real(4);
    r.active_us = st.opt_int64(5);
    for (int b = 0; b < 4; ++b) {
        r.bucket_us[static_cast<std::size_t>(b)] = st.int64(6 + b);
    }
    r.mem_util_pct = narrow<int>(st.opt_int64(10));
    r.mem_used_mib = st.opt_int64(11);
    r.power_mw = st.opt_int64(12);
    r.temperature_c = narrow<int>(st.opt_int64(13));
    r.sm_clock_mhz = narrow<int>(st.opt_int64(14));
    r.clock_event_reasons = narrow<std::uint64_t>(st.opt_int64(15));
    r.read_errors = static_cast<int>(st.int64(16));
    r.device.uuid = st.text(17);
    r.device.index = static_cast<int>(st.int64(18));
    r.device.name = st.text(19);
    r.device.memory_total_mib = st.opt_int64(20);
    r.device.pci_bus_id = st.text(21);
    r.device.parent_uuid = st.text(22);
    return c;
}

void read_processes(Statement& st, RecentCard& card) {
    st.bind(1, std::int64_t{card.t0});
    st.bind(2, card.gpu_id);
    while (st.step()) {
        telemetry::ProcessTick p;
        p.pid = static_cast<std::uint32_t>(st.int64(0));
        p.start_ticks = narrow<std::uint64_t>(st.opt_int64(1));
        p.identity.command = st.text(2);
        p.type = static_cast<telemetry::ProcessType>(st.int64(3));
        p.mem_used_mib = st.opt_int64(4);
        p.sm_util_pct = st.opt_real(5);
        p.identity.user = st.text(6);
        p.identity.uid = narrow<std::uint32_t>(st.opt_int64(7));
        p.identity.container_id = st.text(8);
        p.identity.pod_uid = st.text(9);
        p.identity.slurm_job = st.text(10);
        p.identity.systemd_unit = st.text(11);
        p.identity.jupyter_kernel = st.text(12);
        card.record.processes.push_back(std::move(p));
    }
    st.reset();
}

/// Card-ticks of one card with t0 in [from, to), newest first, with their processes' keys.
struct OlderTick {
    audit::CardTick tick;
    std::vector<audit::ProcessKey> keys;
};

std::vector<OlderTick> older_ticks(Database& db, std::int64_t gpu_id, TimeUs from, TimeUs to) {
    ReadSnapshot snapshot(db);
    Statement cards = db.prepare("SELECT t0_us, duration_us, active_us, util_pct FROM card_tick "
                                 "WHERE gpu_id = ? AND t0_us >= ? AND t0_us < ? "
                                 "ORDER BY t0_us DESC");
    Statement procs =
        db.prepare("SELECT p.t0_us, pr.pid, pr.start_ticks, p.type, p.mem_used_mib, p.sm_util_pct "
                   "FROM proc_tick p JOIN process pr ON pr.id = p.process_id "
                   "WHERE p.gpu_id = ? AND p.t0_us >= ? AND p.t0_us < ? ORDER BY p.t0_us DESC");
    for (Statement* st : {&cards, &procs}) {
        st->bind(1, gpu_id);
        st->bind(2, std::int64_t{from});
        st->bind(3, std::int64_t{to});
    }
    std::vector<OlderTick> out;
    bool have_proc = procs.step();
    while (cards.step()) {
        OlderTick t;
        t.tick.t0 = cards.int64(0);
        t.tick.duration_us = cards.int64(1);
        t.tick.active_us = cards.opt_int64(2);
        t.tick.util_pct = cards.opt_real(3);
        while (have_proc && procs.int64(0) > t.tick.t0) {
            have_proc = procs.step();
        }
        while (have_proc && procs.int64(0) == t.tick.t0) {
            t.keys.push_back({static_cast<std::uint32_t>(procs.int64(1)),
                              narrow<std::uint64_t>(procs.opt_int64(2))});
            t.tick.processes.push_back(
                audit::ProcTick{0, static_cast<telemetry::ProcessType>(procs.int64(3)),
                                procs.opt_int64(4), procs.opt_real(5)});
            have_proc = procs.step();
        }
        out.push_back(std::move(t));
    }
    return out;
}

} // namespace

RecentState read_recent(Database& db) {
    RecentState s;
    ReadSnapshot snapshot(db);
    std::vector<RunRow> runs = Reader(db).runs();
    if (!runs.empty()) {
        s.run = std::move(runs.back());
    }
    Statement newest = db.prepare("SELECT max(t0_us) FROM card_tick");
    if (!newest.step() || newest.is_null(0)) {
        return s;
    }
    const DurationUs interval = s.run ? std::max<DurationUs>(s.run->interval_us, 1) : 1;
    Statement cards = db.prepare(
        "SELECT c.t0_us, c.gpu_id, c.duration_us, c.util_source, c.util_pct, c.active_us, "
        "c.idle_us, c.underutilized_us, c.productive_us, c.compute_bound_us, c.mem_util_pct, "
        "c.mem_used_mib, c.power_mw, c.temperature_c, c.sm_clock_mhz, c.clock_events, "
        "c.read_errors, g.uuid, g.idx, g.name, g.memory_total_mib, g.pci_bus_id, g.parent_uuid "
        "FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE c.t0_us >= ? "
        "ORDER BY c.t0_us DESC");
    cards.bind(1, std::int64_t{newest.int64(0) - 3 * interval});
    while (cards.step()) {
        RecentCard c = card_from_row(cards);
        if (std::none_of(s.cards.begin(), s.cards.end(),
                         [&](const RecentCard& seen) { return seen.gpu_id == c.gpu_id; })) {
            s.last_end = std::max(s.last_end.value_or(c.t0 + c.duration_us), c.t0 + c.duration_us);
            s.cards.push_back(std::move(c));
        }
    }
    Statement procs = db.prepare(
        "SELECT pr.pid, pr.start_ticks, pr.command, p.type, p.mem_used_mib, p.sm_util_pct, "
        "i.user, i.uid, i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel "
        "FROM proc_tick p JOIN process pr ON pr.id = p.process_id "
        "JOIN identity i ON i.id = pr.identity_id WHERE p.t0_us = ? AND p.gpu_id = ? "
        "ORDER BY pr.pid, p.type");
    for (RecentCard& c : s.cards) {
        read_processes(procs, c);
    }
    std::sort(s.cards.begin(), s.cards.end(), [](const RecentCard& a, const RecentCard& b) {
        return a.record.device.index != b.record.device.index
                   ? a.record.device.index < b.record.device.index
                   : a.record.device.uuid < b.record.device.uuid;
    });
    return s;
}

audit::CardNow card_now(const RecentCard& card) {
    return audit::CardNow{card.t0, card.duration_us, &card.record};
}

std::map<audit::ProcessKey, audit::Streak> rewind_streaks(Database& db, const RecentCard& card,
                                                          const audit::Thresholds& thresholds) {
    audit::StreakRewind rewind(card.t0, card.duration_us,
                               audit::holdings_of(card_now(card), thresholds));
    const std::int64_t first = db.scalar("SELECT coalesce(min(t0_us), 0) FROM card_tick");
    TimeUs to = card.t0;
    DurationUs chunk = k_us_per_hour;
    while (rewind.open() && to > first) {
        const TimeUs from = std::max<TimeUs>(first, to - chunk);
        for (const OlderTick& t : older_ticks(db, card.gpu_id, from, to)) {
            if (!rewind.older(t.tick.t0, t.tick.duration_us,
                              audit::holdings_seen(t.tick, t.keys, thresholds))) {
                break;
            }
        }
        to = from;
        chunk = std::min(chunk * 2, k_us_per_day);
    }
    return rewind.streaks();
}

std::map<std::int64_t, audit::StateTimes> recent_states(Database& db, TimeUs from, TimeUs to,
                                                        const audit::Thresholds& thresholds) {
    std::map<std::int64_t, audit::StateTimes> out;
    Reader(db).scan(from, to, [&](const audit::CardTick& tick) {
        out[tick.gpu] += audit::classify(tick, thresholds);
    });
    return out;
}

} // namespace gua::store

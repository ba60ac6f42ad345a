// SPDX-License-Identifier: Apache-2.0
// Recent-state queries: newest card-ticks, streak rewinding and recent state times.
#include "store/recent.hpp"

#include "audit/idle_held.hpp"
#include "store/raw.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <set>

namespace gua::store {

namespace {

/// process id → the process's key and owner, loaded on demand (one query per process).
class ProcessInfo {
  public:
    explicit ProcessInfo(Database& db)
        : m_query(db.prepare("SELECT pr.pid, pr.start_ticks, pr.command, i.user, i.uid, "
                             "i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, "
                             "i.jupyter_kernel, i.pod_namespace, i.pod_name, i.container_name "
                             "FROM process pr JOIN identity i ON i.id = pr.identity_id "
                             "WHERE pr.id = ?")) {}

    /// A process tick of `process_id` with pid, start time and identity filled in.
    const telemetry::ProcessTick& of(std::int64_t process_id) {
        auto it = m_cache.find(process_id);
        if (it != m_cache.end()) {
            return it->second;
        }
        telemetry::ProcessTick p;
        m_query.bind(1, process_id);
        if (m_query.step()) {
            p.pid = static_cast<std::uint32_t>(m_query.int64(0));
            p.start_ticks = narrow_int<std::uint64_t>(m_query.opt_int64(1));
            p.identity.command = m_query.text(2);
            p.identity.user = m_query.text(3);
            p.identity.uid = narrow_int<std::uint32_t>(m_query.opt_int64(4));
            p.identity.container_id = m_query.text(5);
            p.identity.pod_uid = m_query.text(6);
            p.identity.slurm_job = m_query.text(7);
            p.identity.systemd_unit = m_query.text(8);
            p.identity.jupyter_kernel = m_query.text(9);
            p.identity.pod_namespace = m_query.text(10);
            p.identity.pod_name = m_query.text(11);
            p.identity.container_name = m_query.text(12);
        }
        m_query.reset();
        return m_cache.emplace(process_id, std::move(p)).first->second;
    }

  private:
    Statement m_query;
    std::map<std::int64_t, telemetry::ProcessTick> m_cache;
};

/// The device of gpu id `gpu_id` as recorded in the gpu table.
telemetry::DeviceInfo device_of(Database& db, std::int64_t gpu_id) {
    telemetry::DeviceInfo d;
    Statement st = db.prepare("SELECT uuid, idx, name, memory_total_mib, pci_bus_id, parent_uuid "
                              "FROM gpu WHERE id = ?");
    st.bind(1, gpu_id);
    if (st.step()) {
        d.uuid = st.text(0);
        d.index = static_cast<int>(st.int64(1));
        d.name = st.text(2);
        d.memory_total_mib = st.opt_int64(3);
        d.pci_bus_id = st.text(4);
        d.parent_uuid = st.text(5);
    }
    return d;
}

/// The recent view of stored card-tick `t` of `d`.
RecentCard recent_card(const DecodedTicks& d, const StoredCardTick& t, ProcessInfo& processes) {
    RecentCard c;
    c.t0 = t.t0;
    c.gpu_id = t.gpu_id;
    c.duration_us = t.duration_us;
    telemetry::CardTickRecord& r = c.record;
    r.util_source = t.util_source;
    r.util_pct = t.util_pct;
    r.active_us = t.active_us;
    r.bucket_us = t.bucket_us;
    r.unmeasured_us = t.unmeasured_us;
    r.idle_unlisted_us = t.idle_unlisted_us;
    r.idle_unknown_us = t.idle_unknown_us;
    r.readings = t.readings;
    r.read_errors = static_cast<int>(t.read_errors);
    for (std::uint32_t k = t.proc_begin; k < t.proc_begin + t.proc_count; ++k) {
        const StoredProc& sp = d.procs[k];
        telemetry::ProcessTick p = processes.of(sp.process_id);
        p.type = sp.type;
        p.mem_used_mib = sp.mem_used_mib;
        p.sm_util_pct = sp.sm_util_pct;
        p.active_us = sp.active_us;
        p.idle_held_us = sp.idle_held_us;
        r.processes.push_back(std::move(p));
    }
    std::sort(r.processes.begin(), r.processes.end(),
              [](const telemetry::ProcessTick& a, const telemetry::ProcessTick& b) {
                  if (a.pid != b.pid) {
                      return a.pid < b.pid;
                  }
                  return a.type != b.type ? a.type < b.type : a.start_ticks < b.start_ticks;
              });
    return c;
}

/// A card-tick of an older chunk, with its processes' keys.
struct OlderTick {
    audit::CardTick tick;
    std::vector<audit::ProcessKey> keys;
};

/// Card-ticks with t0 in [from, to) of the cards `gpu_ids`, newest first per gpu id; the chunk's
/// blocks are decoded once for all cards.
std::map<std::int64_t, std::vector<OlderTick>> older_ticks(Database& db,
                                                           const std::set<std::int64_t>& gpu_ids,
                                                           TimeUs from, TimeUs to,
                                                           ProcessInfo& processes) {
    ReadTransaction snapshot(db);
    std::map<std::int64_t, std::vector<OlderTick>> out;
    BlockScanner(db).scan(from, to, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            if (!gpu_ids.contains(t.gpu_id)) {
                continue;
            }
            OlderTick o;
            o.tick.t0 = t.t0;
            o.tick.duration_us = t.duration_us;
            o.tick.active_us = t.active_us;
            o.tick.util_pct = t.util_pct;
            o.tick.util_source = t.util_source;
            o.tick.unmeasured_us = t.unmeasured_us;
            o.tick.idle_unlisted_us = t.idle_unlisted_us;
            o.tick.idle_unknown_us = t.idle_unknown_us;
            for (std::uint32_t k = t.proc_begin; k < t.proc_begin + t.proc_count; ++k) {
                const StoredProc& sp = d.procs[k];
                const telemetry::ProcessTick& p = processes.of(sp.process_id);
                o.keys.push_back({p.pid, p.start_ticks});
                o.tick.processes.push_back(audit::ProcTick{
                    0, sp.type, sp.mem_used_mib, sp.sm_util_pct, sp.active_us, sp.idle_held_us});
            }
            out[t.gpu_id].push_back(std::move(o));
        }
    });
    for (auto& [gpu, ticks] : out) {
        std::reverse(ticks.begin(), ticks.end());
    }
    return out;
}

} // namespace

RecentState read_recent(Database& db) {
    RecentState s;
    ReadTransaction snapshot(db);
    std::vector<RunRow> runs = Reader(db).runs();
    if (!runs.empty()) {
        s.run = std::move(runs.back());
    }
    // The newest tick starts at or after the newest block's start.
    Statement newest = db.prepare("SELECT max(t0_us) FROM tick_block");
    if (!newest.step() || newest.is_null(0)) {
        return s;
    }
    const DurationUs interval = s.run ? std::max<DurationUs>(s.run->interval_us, 1) : 1;
    ProcessInfo processes(db);
    std::map<std::int64_t, RecentCard> newest_of_gpu;
    TimeUs newest_t0 = k_time_min;
    BlockScanner(db).scan(newest.int64(0) - 3 * interval, k_time_max, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            newest_t0 = std::max(newest_t0, t.t0);
            auto it = newest_of_gpu.find(t.gpu_id);
            if (it == newest_of_gpu.end() || it->second.t0 <= t.t0) {
                newest_of_gpu[t.gpu_id] = recent_card(d, t, processes);
            }
        }
    });
    for (auto& [gpu_id, c] : newest_of_gpu) {
        if (c.t0 < newest_t0 - 3 * interval) {
            continue;
        }
        c.record.device = device_of(db, gpu_id);
        s.last_end = std::max(s.last_end.value_or(c.t0 + c.duration_us), c.t0 + c.duration_us);
        s.cards.push_back(std::move(c));
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

std::vector<std::map<audit::ProcessKey, audit::Streak>>
rewind_streaks(Database& db, const std::vector<RecentCard>& cards,
               const audit::Thresholds& thresholds) {
    // One rewind per card; the history is read backwards in chunks shared by all cards.
    struct Walk {
        std::int64_t gpu_id;
        TimeUs newest;
        audit::StreakRewind rewind;
        TimeUs last_seen;
    };
    std::vector<Walk> walks;
    for (const RecentCard& card : cards) {
        walks.push_back(Walk{card.gpu_id, card.t0,
                             audit::StreakRewind(card.t0, card.duration_us,
                                                 audit::holdings_of(card_now(card), thresholds)),
                             card.t0});
    }
    // Ticks after a clock step may start up to an hour before the first block.
    const std::int64_t first =
        db.scalar("SELECT coalesce(min(t0_us), 0) FROM tick_block") - k_us_per_hour;
    // A card absent for a week (new, or back after a long outage) has no older history worth
    // decoding: its walk stops there instead of reading every older block.
    constexpr DurationUs k_absent_limit = 7 * k_us_per_day;
    ProcessInfo processes(db);
    TimeUs to = std::numeric_limits<TimeUs>::min();
    for (const Walk& w : walks) {
        to = std::max(to, w.newest);
    }
    DurationUs chunk = k_us_per_hour;
    while (to > first) {
        std::set<std::int64_t> open;
        for (const Walk& w : walks) {
            if (w.rewind.open() && w.last_seen - to < k_absent_limit) {
                open.insert(w.gpu_id);
            }
        }
        if (open.empty()) {
            break;
        }
        const TimeUs from = std::max<TimeUs>(first, to - chunk);
        std::map<std::int64_t, std::vector<OlderTick>> ticks =
            older_ticks(db, open, from, to, processes);
        for (Walk& w : walks) {
            if (!open.contains(w.gpu_id)) {
                continue;
            }
            for (const OlderTick& t : ticks[w.gpu_id]) {
                if (t.tick.t0 >= w.newest) {
                    continue; // the card's own newest tick and anything after it
                }
                w.last_seen = t.tick.t0;
                if (!w.rewind.older(t.tick.t0, t.tick.duration_us,
                                    audit::holdings_seen(t.tick, t.keys, thresholds))) {
                    break;
                }
            }
        }
        to = from;
        chunk = std::min(chunk * 2, k_us_per_day);
    }
    std::vector<std::map<audit::ProcessKey, audit::Streak>> out;
    for (const Walk& w : walks) {
        out.push_back(w.rewind.streaks());
    }
    return out;
}

std::map<audit::ProcessKey, audit::Streak> rewind_streaks(Database& db, const RecentCard& card,
                                                          const audit::Thresholds& thresholds) {
    return rewind_streaks(db, std::vector<RecentCard>{card}, thresholds).front();
}

std::size_t seed_streaks(Database& db, const std::vector<RecentCard>& cards,
                         const audit::Thresholds& thresholds, audit::StreakBook& book) {
    const auto streaks = rewind_streaks(db, cards, thresholds);
    std::size_t seeded = 0;
    for (std::size_t k = 0; k < cards.size(); ++k) {
        for (const auto& [process, streak] : streaks[k]) {
            book.seed(audit::HoldingKey{cards[k].record.device.uuid, process}, streak);
            ++seeded;
        }
    }
    return seeded;
}

void read_memory_trends(Database& db, const std::vector<RecentCard>& cards,
                        audit::TrendBook& book) {
    if (cards.empty()) {
        return;
    }
    std::set<std::int64_t> ids;
    TimeUs newest = std::numeric_limits<TimeUs>::min();
    for (const RecentCard& c : cards) {
        ids.insert(c.gpu_id);
        newest = std::max(newest, c.t0);
    }
    ProcessInfo processes(db);
    std::map<std::int64_t, std::vector<OlderTick>> ticks =
        older_ticks(db, ids, newest - audit::k_trend_window_us, newest + 1, processes);
    std::vector<audit::MemoryReading> readings;
    for (const RecentCard& c : cards) {
        const std::vector<OlderTick>& newest_first = ticks[c.gpu_id];
        for (auto t = newest_first.rbegin(); t != newest_first.rend(); ++t) {
            if (t->tick.t0 > c.t0) {
                continue;
            }
            readings.clear();
            for (std::size_t i = 0; i < t->keys.size(); ++i) {
                readings.push_back({t->keys[i], t->tick.processes[i].mem_used_mib});
            }
            audit::add_card_readings(book, c.record.device.uuid, t->tick.t0 + t->tick.duration_us,
                                     readings);
        }
    }
}

std::map<std::int64_t, audit::StateTimes> recent_states(Database& db, TimeUs from, TimeUs to,
                                                        const audit::Thresholds& thresholds) {
    std::map<std::int64_t, audit::StateTimes> out;
    Reader(db).scan(from, to, [&](const audit::CardTick& tick) {
        out[tick.gpu] += audit::classify(tick, thresholds);
    });
    return out;
}

std::map<std::int64_t, std::vector<audit::StateSpan>>
recent_spans(Database& db, TimeUs from, TimeUs to, const audit::Thresholds& thresholds) {
    std::map<std::int64_t, std::vector<audit::StateSpan>> out;
    Reader(db).scan(from, to, [&](const audit::CardTick& tick) {
        out[tick.gpu].push_back(
            audit::StateSpan{tick.t0, tick.duration_us, audit::classify(tick, thresholds)});
    });
    return out;
}

} // namespace gua::store

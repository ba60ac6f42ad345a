// SPDX-License-Identifier: Apache-2.0
// The live view's model: cards, holders sorted worst first, decisions newest first.
#include "live/build.hpp"

#include "audit/from_tick.hpp"

#include <algorithm>

namespace gua::live {

namespace {

double weight(const HolderNow& h) {
    return h.idle_held ? static_cast<double>(h.mem_mib.value_or(0)) * static_cast<double>(h.idle_us)
                       : 0.0;
}

HolderNow& holder_of(std::vector<HolderNow>& rows, std::size_t first,
                     const telemetry::ProcessTick& p) {
    for (std::size_t i = first; i < rows.size(); ++i) {
        if (rows[i].pid == p.pid && rows[i].start_ticks == p.start_ticks) {
            return rows[i];
        }
    }
    HolderNow h;
    h.pid = p.pid;
    h.start_ticks = p.start_ticks;
    h.user = p.identity.user;
    h.uid = p.identity.uid;
    h.command = p.identity.command;
    h.type = telemetry::to_string(p.type);
    h.container_id = p.identity.container_id;
    h.pod_uid = p.identity.pod_uid;
    h.pod_namespace = p.identity.pod_namespace;
    h.pod_name = p.identity.pod_name;
    h.container_name = p.identity.container_name;
    h.slurm_job = p.identity.slurm_job;
    h.jupyter_kernel = p.identity.jupyter_kernel;
    rows.push_back(std::move(h));
    return rows.back();
}

DecisionNow decision_of(const store::DecisionRow& r) {
    return DecisionNow{r.time_us,
                       r.rule,
                       r.action,
                       r.dry_run,
                       r.verdict,
                       r.outcome,
                       r.pid,
                       r.user,
                       r.command,
                       r.gpu_index,
                       r.memory_mib,
                       r.idle_us,
                       r.reclaimed_gib_hours,
                       r.detail};
}

/// The holders of card `r` (as `tick` classes its processes), appended to `holders` from index
/// `first` on: one row per process, memory summed and SM utilization the highest.
void add_holders(std::vector<HolderNow>& holders, std::size_t first,
                 const telemetry::CardTickRecord& r, const audit::CardTick& tick,
                 const audit::Thresholds& thresholds) {
    for (std::size_t i = 0; i < r.processes.size(); ++i) {
        const telemetry::ProcessTick& p = r.processes[i];
        if (!audit::is_holder(tick.processes[i], thresholds)) {
            continue;
        }
        HolderNow& h = holder_of(holders, first, p);
        h.gpu_index = r.device.index;
        h.gpu_uuid = r.device.uuid;
        if (p.mem_used_mib) {
            h.mem_mib = h.mem_mib.value_or(0) + *p.mem_used_mib;
        }
        if (p.sm_util_pct) {
            h.sm_pct = std::max(h.sm_pct.value_or(0.0), *p.sm_util_pct);
        }
    }
}

/// Each holder's memory trend on card `r`, and when it would fill the card's free memory.
void add_trends(std::vector<HolderNow>& holders, std::size_t first,
                const telemetry::CardTickRecord& r, const audit::TrendBook& trends) {
    const std::optional<std::int64_t> free_mib =
        r.device.memory_total_mib && r.readings.mem_used_mib
            ? std::optional(*r.device.memory_total_mib - *r.readings.mem_used_mib)
            : std::nullopt;
    for (std::size_t i = first; i < holders.size(); ++i) {
        HolderNow& h = holders[i];
        const std::optional<audit::MemoryTrend> trend =
            trends.trend(audit::HoldingKey{r.device.uuid, {h.pid, h.start_ticks}});
        if (trend) {
            h.mem_trend_mib_per_hour = trend->mib_per_hour;
            if (free_mib) {
                h.time_to_full_us = audit::time_to_full(*trend, *free_mib);
            }
        }
    }
}

/// Marks the holders that hold `card` idle, with how long they have (from their streak).
void mark_idle_held(std::vector<HolderNow>& holders, std::size_t first, const audit::CardNow& card,
                    const audit::StreakBook& streaks, const audit::Thresholds& thresholds) {
    const telemetry::CardTickRecord& r = *card.record;
    for (const audit::HoldingSeen& seen : audit::holdings_of(card, thresholds)) {
        const auto streak = streaks.find(audit::HoldingKey{r.device.uuid, seen.process});
        for (std::size_t i = first; i < holders.size(); ++i) {
            HolderNow& h = holders[i];
            if (h.pid == seen.process.pid && h.start_ticks == seen.process.start_ticks &&
                seen.idle_held) {
                h.idle_held = true;
                h.idle_us = streak ? streak->idle_us : card.duration_us;
                h.idle_since = streak ? streak->since : card.t0;
            }
        }
    }
}

/// Worst first: idle-held memory × time, then memory, then card and pid.
void sort_worst_first(std::vector<HolderNow>& holders) {
    std::stable_sort(holders.begin(), holders.end(), [](const HolderNow& a, const HolderNow& b) {
        if (weight(a) != weight(b)) {
            return weight(a) > weight(b);
        }
        if (a.mem_mib.value_or(0) != b.mem_mib.value_or(0)) {
            return a.mem_mib.value_or(0) > b.mem_mib.value_or(0);
        }
        return a.gpu_index != b.gpu_index ? a.gpu_index < b.gpu_index : a.pid < b.pid;
    });
}

} // namespace

Shares shares_of(const audit::StateTimes& t) {
    const double measured = static_cast<double>(t.active + t.idle_held + t.truly_idle);
    if (measured <= 0) {
        return Shares{};
    }
    return Shares{static_cast<double>(t.active) / measured,
                  static_cast<double>(t.idle_held) / measured,
                  static_cast<double>(t.truly_idle) / measured};
}

NowModel build_now(NowModel m, const std::vector<audit::CardNow>& cards,
                   const audit::StreakBook& streaks,
                   const std::map<std::string, audit::StateTimes>& recent,
                   const std::vector<store::DecisionRow>& decisions,
                   const audit::Thresholds& thresholds, const audit::TrendBook& trends) {
    for (const audit::CardNow& card : cards) {
        const telemetry::CardTickRecord& r = *card.record;
        std::vector<audit::ProcessKey> keys;
        const audit::CardTick tick = audit::card_tick_of(card, keys);
        GpuNow g{r.device.index,
                 r.device.uuid,
                 r.device.name,
                 r.util_pct,
                 r.readings.mem_used_mib,
                 r.device.memory_total_mib,
                 audit::dominant_state(tick, thresholds),
                 {},
                 {},
                 {},
                 r.device.parent_uuid,
                 std::nullopt};
        if (const auto it = recent.find(r.device.uuid); it != recent.end()) {
            g.recent = shares_of(it->second);
        }
        m.gpus.push_back(std::move(g));
        const std::size_t first = m.holders.size();
        add_holders(m.holders, first, r, tick, thresholds);
        add_trends(m.holders, first, r, trends);
        mark_idle_held(m.holders, first, card, streaks, thresholds);
    }
    sort_worst_first(m.holders);
    for (auto it = decisions.rbegin(); it != decisions.rend(); ++it) {
        m.decisions.push_back(decision_of(*it));
    }
    return m;
}

void slice_history(NowModel& m, int count) {
    for (GpuNow& g : m.gpus) {
        g.recent_states = m.last_tick_end
                              ? audit::slice_states(g.timeline, *m.last_tick_end - m.history_us,
                                                    *m.last_tick_end, count)
                              : std::vector<audit::StateSlice>{};
    }
}

void observe_memory(audit::TrendBook& book, const std::vector<audit::CardNow>& cards) {
    std::vector<audit::MemoryReading> readings;
    for (const audit::CardNow& card : cards) {
        readings.clear();
        for (const telemetry::ProcessTick& p : card.record->processes) {
            readings.push_back({{p.pid, p.start_ticks}, p.mem_used_mib});
        }
        audit::add_card_readings(book, card.record->device.uuid, card.t0 + card.duration_us,
                                 readings);
    }
}

} // namespace gua::live

// SPDX-License-Identifier: Apache-2.0
// The live view's two sources.
#include "live/source.hpp"

#include "audit/holdings.hpp"
#include "core/duration.hpp"
#include "live/build.hpp"
#include "live/last_xid.hpp"
#include "sampler/sampler.hpp"
#include "store/policy_log.hpp"

#include <array>
#include <unistd.h>

namespace gua::live {

namespace {

/// Each card's classified card-ticks of the history window ending at `end`, by uuid; a tick that
/// began up to `interval_us` before the window still shows its part inside it.
std::map<std::string, std::vector<audit::StateSpan>>
timelines(store::Database& db, const std::map<std::string, std::int64_t>& ids, TimeUs end,
          DurationUs history_us, DurationUs interval_us, const audit::Thresholds& thresholds) {
    auto spans = store::recent_spans(db, end - history_us - interval_us, end, thresholds);
    std::map<std::string, std::vector<audit::StateSpan>> out;
    for (const auto& [uuid, id] : ids) {
        if (const auto it = spans.find(id); it != spans.end()) {
            out[uuid] = std::move(it->second);
        }
    }
    return out;
}

void attach_timelines(NowModel& m, std::map<std::string, std::vector<audit::StateSpan>> spans) {
    for (GpuNow& g : m.gpus) {
        if (const auto it = spans.find(g.uuid); it != spans.end()) {
            g.timeline = std::move(it->second);
        }
    }
}

std::string hostname() {
    std::array<char, 256> buf{};
    return gethostname(buf.data(), buf.size() - 1) == 0 ? std::string(buf.data()) : "unknown";
}

} // namespace

sampler::SamplerOptions one_tick_options(const audit::Thresholds& thresholds,
                                         DurationUs length_us) {
    sampler::SamplerOptions so;
    so.interval_us = length_us;
    so.active_threshold_pct = thresholds.active_util_pct;
    so.graphics_is_holder = thresholds.graphics_is_holder;
    so.held_mib = thresholds.held_mib;
    so.max_poll_us = std::min<DurationUs>(so.max_poll_us, std::max<DurationUs>(length_us / 2, 1));
    so.max_ticks = 1;
    return so;
}

bool daemon_is_recording(const store::RecentState& recent, TimeUs now) {
    return recent.run && !recent.run->ended_us && recent.last_end &&
           *recent.last_end >= now - 3 * std::max<DurationUs>(recent.run->interval_us, 1);
}

std::string no_daemon_reason(const store::RecentState& recent, TimeUs now) {
    if (!recent.last_end) {
        return "no daemon is recording";
    }
    return "no daemon is recording (last tick ended " +
           format_duration(std::max<DurationUs>(now - *recent.last_end, k_us_per_second) /
                           k_us_per_second * k_us_per_second) +
           " ago)";
}

NowModel now_from_database(store::Database& db, const std::string& db_path,
                           const store::RecentState& recent, const LiveOptions& options,
                           TimeUs now) {
    NowModel m;
    m.now = now;
    m.host = recent.run ? recent.run->host : "";
    m.origin = Origin::daemon;
    m.db_path = db_path;
    m.last_tick_end = recent.last_end;
    m.interval_us = recent.run ? recent.run->interval_us : 0;
    m.recent_window_us = options.recent_window_us;
    m.decisions_window_us = options.decisions_window_us;
    m.history_us = options.history_us;
    audit::StreakBook book;
    std::vector<audit::CardNow> cards;
    std::map<std::string, std::int64_t> ids;
    store::seed_streaks(db, recent.cards, options.thresholds, book);
    for (const store::RecentCard& card : recent.cards) {
        cards.push_back(store::card_now(card));
        ids[card.record.device.uuid] = card.gpu_id;
    }
    const TimeUs end = recent.last_end.value_or(now);
    const auto states =
        store::recent_states(db, end - options.recent_window_us, end + 1, options.thresholds);
    std::map<std::string, audit::StateTimes> by_uuid;
    for (const auto& [uuid, id] : ids) {
        if (const auto it = states.find(id); it != states.end()) {
            by_uuid[uuid] = it->second;
        }
    }
    audit::TrendBook trends;
    store::read_memory_trends(db, recent.cards, trends);
    auto spans = timelines(db, ids, end + 1, options.history_us, m.interval_us, options.thresholds);
    m = build_now(std::move(m), cards, book, by_uuid,
                  store::read_decisions(db, now - options.decisions_window_us, now + 1),
                  options.thresholds, trends);
    attach_timelines(m, std::move(spans));
    attach_last_xids(m, faults_since(db, now - options.xid_window_us), options.xid_window_us);
    return m;
}

LiveSampler::LiveSampler(telemetry::DeviceSource& source, LiveOptions options)
    : m_source(source), m_options(options) {}

void LiveSampler::seed(store::Database& db, const std::string& db_path, TimeUs now) {
    m_db_path = db_path;
    const store::RecentState recent = store::read_recent(db);
    store::seed_streaks(db, recent.cards, m_options.thresholds, m_book);
    store::read_memory_trends(db, recent.cards, m_trends);
    std::map<std::string, std::int64_t> ids;
    for (const store::RecentCard& card : recent.cards) {
        ids[card.record.device.uuid] = card.gpu_id;
    }
    m_timeline = timelines(db, ids, now, m_options.history_us,
                           recent.run ? recent.run->interval_us : 0, m_options.thresholds);
    m_decisions = store::read_decisions(db, now - m_options.decisions_window_us, now + 1);
    m_faults = faults_since(db, now - m_options.xid_window_us);
}

NowModel LiveSampler::sample(DurationUs length_us, Clock& clock, const std::atomic<bool>& stop,
                             const std::string& note) {
    sampler::Sampler sampler(m_source, clock, m_resolver,
                             one_tick_options(m_options.thresholds, length_us));
    telemetry::Tick last;
    sampler.run(stop, [&](const telemetry::Tick& tick) { last = tick; });
    const std::vector<audit::CardNow> cards = audit::cards_of(last);
    audit::observe(m_book, cards, m_options.thresholds);
    observe_memory(m_trends, cards);
    m_trends.forget_before(last.t0 - audit::k_trend_window_us);
    const TimeUs end = last.t0 + last.duration_us;
    for (const audit::CardNow& card : cards) {
        std::vector<audit::ProcessKey> keys;
        const audit::StateTimes times =
            audit::classify(audit::card_tick_of(card, keys), m_options.thresholds);
        m_recent[card.record->device.uuid] += times;
        std::vector<audit::StateSpan>& line = m_timeline[card.record->device.uuid];
        line.push_back(audit::StateSpan{card.t0, card.duration_us, times});
        std::erase_if(line, [&](const audit::StateSpan& s) {
            return s.t0 + s.duration_us <= end - m_options.history_us;
        });
    }
    m_sampled_us += last.duration_us;
    NowModel m;
    m.now = clock.wall_now();
    m.host = hostname();
    m.origin = Origin::sampled;
    m.db_path = m_db_path;
    m.last_tick_end = last.t0 + last.duration_us;
    m.interval_us = length_us;
    m.note = note + "; sampled NVML directly for " + format_duration(m_sampled_us);
    m.recent_window_us = m_sampled_us;
    m.decisions_window_us = m_options.decisions_window_us;
    m.history_us = m_options.history_us;
    m = build_now(std::move(m), cards, m_book, m_recent, m_decisions, m_options.thresholds,
                  m_trends);
    attach_timelines(m, m_timeline);
    if (!m_db_path.empty()) {
        attach_last_xids(m, m_faults, m_options.xid_window_us);
    }
    return m;
}

} // namespace gua::live

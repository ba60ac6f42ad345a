// SPDX-License-Identifier: Apache-2.0
// Reading hourly and daily rollups back into audit::RollupTotals, one range query per table.
#include "store/evidence.hpp"
#include "store/rollup.hpp"

#include <nlohmann/json.hpp>

namespace gua::store {

namespace {

std::vector<audit::Gap> parse_gaps(const std::string& text) {
    std::vector<audit::Gap> gaps;
    if (text.empty()) {
        return gaps;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) {
        return gaps;
    }
    for (const nlohmann::json& g : j) {
        if (g.is_array() && g.size() == 2) {
            gaps.push_back(audit::Gap{g[0].get<TimeUs>(), g[1].get<TimeUs>()});
        }
    }
    return gaps;
}

constexpr const char* k_hour_columns =
    "hour, active_util_pct, held_mib, graphics_is_holder, active_us, idle_held_us, "
    "truly_idle_us, unmeasured_us, first_t0_us, first_duration_us, last_end_us, gaps, "
    "allocated_unused_us";

audit::Thresholds thresholds_at(const Statement& st, int column) {
    audit::Thresholds t;
    t.active_util_pct = st.real(column);
    t.held_mib = st.int64(column + 1);
    t.graphics_is_holder = st.int64(column + 2) != 0;
    return t;
}

/// An hour slice from a row selected with k_hour_columns.
audit::HourSlice slice_at(const Statement& st) {
    audit::HourSlice s;
    s.hour_start = st.int64(0) * k_us_per_hour;
    s.states = audit::StateTimes{st.int64(4), st.int64(5), st.int64(6), st.int64(7)};
    s.states.allocated_unused = st.int64(12);
    s.coverage =
        audit::CoverageSummary{st.int64(8), st.int64(9), st.int64(10), parse_gaps(st.text(11))};
    return s;
}

/// Finds the rollup starting at `hour` in `out` (ascending), advancing `at`.
StoredRollup* find(std::vector<StoredRollup>& out, std::size_t& at, std::int64_t hour) {
    while (at < out.size() && out[at].first_hour + out[at].span_hours <= hour) {
        ++at;
    }
    return at < out.size() && out[at].first_hour <= hour ? &out[at] : nullptr;
}

/// Card totals from `ticks`, 4 state times, 4 bucket times starting at `column`, and the
/// evidence BLOB at `evidence`, allocated-unused time after it.
audit::GpuTotals gpu_totals_at(const Statement& st, int column, int evidence) {
    audit::GpuTotals t;
    t.ticks = static_cast<std::uint64_t>(st.int64(column));
    t.states = audit::StateTimes{st.int64(column + 1), st.int64(column + 2), st.int64(column + 3),
                                 st.int64(column + 4)};
    for (std::size_t b = 0; b < 4; ++b) {
        t.bucket_us[b] = st.int64(column + 5 + static_cast<int>(b));
    }
    t.states.allocated_unused = st.int64(evidence + 1);
    decode_evidence(st.blob(evidence), t);
    return t;
}

/// Identity totals from ticks, active_us, idle_held_us, idle_held_mib_ms, holder_ticks, gpu_id
/// starting at `column` (the identity id and the evidence BLOB follow them).
audit::RollupIdentity identity_at(const Statement& st, int column) {
    audit::IdentityTotals t;
    t.ticks = static_cast<std::uint64_t>(st.int64(column));
    t.active_us = st.int64(column + 1);
    t.idle_held_us = st.int64(column + 2);
    t.idle_held_mib_ms = st.int64(column + 3);
    t.holder_ticks = static_cast<std::uint64_t>(st.int64(column + 4));
    t.by_gpu.push_back(audit::IdentityGpuTime{static_cast<std::uint32_t>(st.int64(column + 5)),
                                              t.active_us, t.idle_held_us});
    decode_identity_evidence(st.blob(column + 7), t);
    return audit::RollupIdentity{static_cast<std::uint32_t>(st.int64(column + 6)), std::move(t)};
}

void bind_range(Statement& st, std::int64_t first, std::int64_t end) {
    st.bind(1, std::int64_t{first});
    st.bind(2, std::int64_t{end});
}

} // namespace

RollupReader::RollupReader(Database& db, std::optional<std::int64_t> gpu)
    : m_gpu(gpu),
      m_hours(db.prepare(std::string("SELECT ") + k_hour_columns +
                         " FROM rollup_hour WHERE hour >= ?1 AND hour < ?2 ORDER BY hour")),
      m_cards(db.prepare(std::string("SELECT hour, gpu_id, ticks, active_us, idle_held_us, "
                                     "truly_idle_us, unmeasured_us, idle_us, underutilized_us, "
                                     "productive_us, compute_bound_us, first_t0_us, "
                                     "first_duration_us, last_end_us, gaps, evidence, "
                                     "allocated_unused_us FROM rollup_gpu "
                                     "WHERE hour >= ?1 AND hour < ?2") +
                         (gpu ? " AND gpu_id = ?3" : "") + " ORDER BY hour, gpu_id")),
      m_identities(db.prepare(std::string("SELECT hour, ticks, active_us, idle_held_us, "
                                          "idle_held_mib_ms, holder_ticks, gpu_id, identity_id, "
                                          "evidence FROM rollup_identity "
                                          "WHERE hour >= ?1 AND hour < ?2") +
                              (gpu ? " AND gpu_id = ?3" : "") +
                              " ORDER BY hour, gpu_id, identity_id")),
      m_days(db.prepare("SELECT day, hours, active_util_pct, held_mib, graphics_is_holder, "
                        "off_hours_mask FROM rollup_day WHERE day >= ?1 AND day < ?2 ORDER BY "
                        "day")),
      m_day_cards(db.prepare("SELECT day, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
                             "unmeasured_us, idle_us, underutilized_us, productive_us, "
                             "compute_bound_us, evidence, allocated_unused_us FROM rollup_day_gpu "
                             "WHERE day >= ?1 AND day < ?2 "
                             "ORDER BY day, gpu_id")),
      m_day_identities(
          db.prepare("SELECT day, ticks, active_us, idle_held_us, "
                     "idle_held_mib_ms, holder_ticks, gpu_id, identity_id, "
                     "evidence FROM rollup_day_identity WHERE day >= ?1 AND day < ?2 ORDER BY day, "
                     "gpu_id, identity_id")) {}

void RollupReader::hours(std::int64_t first_hour, std::int64_t end_hour,
                         std::vector<StoredRollup>& out) {
    out.clear();
    bind_range(m_hours, first_hour, end_hour);
    while (m_hours.step()) {
        StoredRollup r;
        r.first_hour = m_hours.int64(0);
        r.hours_with_ticks = 1;
        r.thresholds = thresholds_at(m_hours, 1);
        r.totals.hours.push_back(slice_at(m_hours));
        if (m_gpu) {
            r.totals.hours.back().states = audit::StateTimes{};
        }
        out.push_back(std::move(r));
    }
    m_hours.reset();
    for (Statement* st : {&m_cards, &m_identities}) {
        bind_range(*st, first_hour, end_hour);
        if (m_gpu) {
            st->bind(3, std::int64_t{*m_gpu});
        }
    }
    std::size_t at = 0;
    while (m_cards.step()) {
        StoredRollup* r = find(out, at, m_cards.int64(0));
        if (r == nullptr) {
            continue;
        }
        audit::RollupCard c{static_cast<std::uint32_t>(m_cards.int64(1)),
                            gpu_totals_at(m_cards, 2, 15), m_cards.int64(13)};
        if (m_gpu) {
            audit::HourSlice& slice = r->totals.hours.back();
            slice.states = c.totals.states;
            slice.coverage =
                audit::CoverageSummary{m_cards.int64(11), m_cards.int64(12), m_cards.int64(13),
                                       parse_gaps(m_cards.text(14))};
        }
        r->totals.cards.push_back(c);
    }
    m_cards.reset();
    at = 0;
    while (m_identities.step()) {
        StoredRollup* r = find(out, at, m_identities.int64(0));
        if (r != nullptr) {
            r->totals.identities.push_back(identity_at(m_identities, 1));
        }
    }
    m_identities.reset();
}

void RollupReader::days(std::int64_t first_day, std::int64_t end_day,
                        std::vector<StoredRollup>& out) {
    out.clear();
    bind_range(m_days, first_day, end_day);
    while (m_days.step()) {
        StoredRollup r;
        r.first_hour = m_days.int64(0) * 24;
        r.span_hours = 24;
        r.hours_with_ticks = m_days.int64(1);
        r.thresholds = thresholds_at(m_days, 2);
        r.off_hours_mask = m_days.int64(5);
        out.push_back(std::move(r));
    }
    m_days.reset();
    std::size_t at = 0;
    bind_range(m_hours, first_day * 24, end_day * 24);
    while (m_hours.step()) {
        if (StoredRollup* r = find(out, at, m_hours.int64(0))) {
            r->totals.hours.push_back(slice_at(m_hours));
            r->totals.hours.back().off_hours =
                ((r->off_hours_mask >> (m_hours.int64(0) - r->first_hour)) & 1) != 0;
        }
    }
    m_hours.reset();
    at = 0;
    bind_range(m_day_cards, first_day, end_day);
    while (m_day_cards.step()) {
        if (StoredRollup* r = find(out, at, m_day_cards.int64(0) * 24)) {
            r->totals.cards.push_back(
                audit::RollupCard{static_cast<std::uint32_t>(m_day_cards.int64(1)),
                                  gpu_totals_at(m_day_cards, 2, 11), std::nullopt});
        }
    }
    m_day_cards.reset();
    at = 0;
    bind_range(m_day_identities, first_day, end_day);
    while (m_day_identities.step()) {
        if (StoredRollup* r = find(out, at, m_day_identities.int64(0) * 24)) {
            r->totals.identities.push_back(identity_at(m_day_identities, 1));
        }
    }
    m_day_identities.reset();
}

} // namespace gua::store

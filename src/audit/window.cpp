// WindowAccumulator: the single place where card-ticks (or hourly rollups of them) become window
// totals.
#include "audit/window.hpp"

#include <algorithm>

namespace gua::audit {

namespace {

constexpr DurationUs k_quarter_us = 15 * k_us_per_minute;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - (a % b < 0 ? 1 : 0);
}

DurationUs allowed_gap(DurationUs duration_us) {
    return std::max<DurationUs>(2 * duration_us, k_us_per_minute);
}

} // namespace

IdentityTotals& IdentityTotals::operator+=(const IdentityTotals& o) {
    active_us += o.active_us;
    idle_held_us += o.idle_held_us;
    idle_held_mib_ms += o.idle_held_mib_ms;
    ticks += o.ticks;
    return *this;
}

void CoverageTracker::add(TimeUs t0, DurationUs duration_us, TimeUs end) {
    if (!m_first) {
        m_first = t0;
        m_first_duration_us = duration_us;
    } else if (m_last_end && t0 - *m_last_end > allowed_gap(duration_us)) {
        m_gaps.push_back(Gap{*m_last_end, t0});
    }
    m_last_end = std::max(m_last_end.value_or(end), end);
}

void CoverageTracker::append_gaps(const std::vector<Gap>& gaps) {
    m_gaps.insert(m_gaps.end(), gaps.begin(), gaps.end());
}

std::optional<CoverageSummary> CoverageTracker::summary() const {
    if (!m_first || !m_last_end) {
        return std::nullopt;
    }
    return CoverageSummary{*m_first, m_first_duration_us, *m_last_end, m_gaps};
}

WindowAccumulator::WindowAccumulator(Thresholds thresholds, std::uint32_t nobody,
                                     WeekdayHourFn weekday_hour)
    : m_thresholds(thresholds), m_nobody(nobody), m_weekday_hour(std::move(weekday_hour)) {}

std::pair<int, int> WindowAccumulator::cell_of(TimeUs t) {
    // Zone offsets are whole quarter hours, so the cell is constant within a UTC quarter hour.
    const std::int64_t quarter = floor_div(t, k_quarter_us);
    if (quarter != m_cached_quarter) {
        m_cached_quarter = quarter;
        m_cached_cell = m_weekday_hour(quarter * k_quarter_us);
    }
    return m_cached_cell;
}

void WindowAccumulator::add(const CardTick& tick) {
    const StateTimes states = classify(tick, m_thresholds);
    m_states += states;
    ++m_ticks;

    if (m_gpus.size() <= tick.gpu) {
        m_gpus.resize(tick.gpu + 1);
    }
    GpuTotals& gpu = m_gpus[tick.gpu];
    gpu.states += states;
    ++gpu.ticks;
    for (std::size_t b = 0; b < k_bucket_count; ++b) {
        gpu.bucket_us[b] += tick.bucket_us[b];
        m_bucket_us[b] += tick.bucket_us[b];
    }

    attribute_us(tick, states, m_thresholds, m_nobody, m_shares);
    for (const IdentityShareUs& s : m_shares) {
        if (m_identities.size() <= s.identity) {
            m_identities.resize(s.identity + 1);
        }
        IdentityTotals& id = m_identities[s.identity];
        id.active_us += s.active_us;
        id.idle_held_us += s.idle_held_us;
        id.idle_held_mib_ms += s.idle_held_mib_us / 1000;
        ++id.ticks;
    }

    const auto [weekday, hour] = cell_of(tick.t0);
    m_heatmap[static_cast<std::size_t>(weekday)][static_cast<std::size_t>(hour)] += states;
    m_coverage.add(tick.t0, tick.duration_us, tick.t0 + tick.duration_us);
}

bool WindowAccumulator::can_add_rollup(const RollupTotals& rollup) const {
    std::optional<TimeUs> last_end = m_coverage.last_end();
    for (const HourSlice& h : rollup.hours) {
        const std::pair<int, int> cell = m_weekday_hour(h.hour_start);
        for (int q = 1; q < 4; ++q) {
            if (m_weekday_hour(h.hour_start + q * k_quarter_us) != cell) {
                return false;
            }
        }
        const CoverageSummary& c = h.coverage;
        if (last_end && *last_end > c.first_t0 + c.first_duration_us) {
            return false;
        }
        last_end = std::max(last_end.value_or(c.last_end), c.last_end);
    }
    return true;
}

void WindowAccumulator::add_rollup(const RollupTotals& rollup) {
    for (const RollupCard& card : rollup.cards) {
        const GpuTotals& t = card.totals;
        m_states += t.states;
        m_ticks += t.ticks;
        if (m_gpus.size() <= card.gpu) {
            m_gpus.resize(card.gpu + 1);
        }
        GpuTotals& gpu = m_gpus[card.gpu];
        gpu.states += t.states;
        gpu.ticks += t.ticks;
        for (std::size_t b = 0; b < k_bucket_count; ++b) {
            gpu.bucket_us[b] += t.bucket_us[b];
            m_bucket_us[b] += t.bucket_us[b];
        }
    }
    for (const RollupIdentity& i : rollup.identities) {
        const std::uint32_t index = i.identity == 0 ? m_nobody : i.identity;
        if (m_identities.size() <= index) {
            m_identities.resize(index + 1);
        }
        m_identities[index] += i.totals;
    }
    for (const HourSlice& h : rollup.hours) {
        const auto [weekday, hour] = cell_of(h.hour_start);
        m_heatmap[static_cast<std::size_t>(weekday)][static_cast<std::size_t>(hour)] += h.states;
        const CoverageSummary& c = h.coverage;
        m_coverage.add(c.first_t0, c.first_duration_us, c.last_end);
        m_coverage.append_gaps(c.gaps);
    }
}

} // namespace gua::audit

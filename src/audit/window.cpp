// WindowAccumulator: the single place where card-ticks become window totals.
#include "audit/window.hpp"

#include <algorithm>

namespace gua::audit {

WindowAccumulator::WindowAccumulator(Thresholds thresholds, std::uint32_t nobody,
                                     WeekdayHourFn weekday_hour)
    : m_thresholds(thresholds), m_nobody(nobody), m_weekday_hour(std::move(weekday_hour)) {}

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

    attribute(tick, states, m_thresholds, m_nobody, m_shares);
    const auto totals_of = [this](std::uint32_t identity) -> IdentityTotals& {
        if (m_identities.size() <= identity) {
            m_identities.resize(identity + 1);
        }
        return m_identities[identity];
    };
    for (const IdentityShare& s : m_shares) {
        IdentityTotals& id = totals_of(s.identity);
        id.active_us += s.active_us;
        id.idle_held_us += s.idle_held_us;
        id.idle_held_mib_us += s.idle_held_mib_us;
        auto on_gpu = std::find_if(id.by_gpu.begin(), id.by_gpu.end(),
                                   [&](const IdentityGpuTime& g) { return g.gpu == tick.gpu; });
        if (on_gpu == id.by_gpu.end()) {
            on_gpu = id.by_gpu.insert(id.by_gpu.end(), IdentityGpuTime{tick.gpu});
        }
        on_gpu->active_us += s.active_us;
        on_gpu->idle_held_us += s.idle_held_us;
    }
    // Presence counts every identity with a process on the card, measured or not (MIG).
    presence(tick, m_thresholds, m_present);
    for (const Presence& p : m_present) {
        IdentityTotals& id = totals_of(p.identity);
        ++id.ticks;
        id.holder_ticks += p.holder ? 1 : 0;
    }
    if (tick.processes.empty() && !m_shares.empty()) {
        ++totals_of(m_nobody).ticks;
    }

    // Zone offsets are whole quarter hours, so the cell is constant within a UTC quarter hour.
    constexpr DurationUs k_quarter = 15 * k_us_per_minute;
    const std::int64_t quarter = tick.t0 / k_quarter - (tick.t0 % k_quarter < 0 ? 1 : 0);
    if (quarter != m_cached_quarter) {
        m_cached_quarter = quarter;
        m_cached_cell = m_weekday_hour(quarter * k_quarter);
    }
    m_heatmap[static_cast<std::size_t>(m_cached_cell.first)]
             [static_cast<std::size_t>(m_cached_cell.second)] += states;
    add_to_pools(tick, states, pattern_of(tick), held_mib(tick, m_thresholds),
                 is_off_hours(m_cached_cell.first, m_cached_cell.second), gpu.pools, gpu.profile);

    const TimeUs end = tick.t0 + tick.duration_us;
    if (!m_first) {
        m_first = tick.t0;
    } else if (m_last_end) {
        const DurationUs allowed = std::max<DurationUs>(2 * tick.duration_us, k_us_per_minute);
        if (tick.t0 - *m_last_end > allowed) {
            m_gaps.push_back(Gap{*m_last_end, tick.t0});
        }
    }
    m_last_end = std::max(m_last_end.value_or(end), end);
}

} // namespace gua::audit

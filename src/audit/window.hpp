// WindowTotals: everything the report needs, accumulated card-tick by card-tick over a window.
#pragma once

#include "audit/attribute.hpp"
#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/pools.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace gua::audit {

/// Totals for one card.
struct GpuTotals {
    StateTimes states;
    std::array<DurationUs, k_bucket_count> bucket_us{};
    std::uint64_t ticks = 0;
    PoolTimes pools{};   ///< waste pools (disjoint slices of the measured time)
    CardProfile profile; ///< patterns, memory and time of day for the recommender
};

/// One identity's attributed time on one card (for pricing by card model).
struct IdentityGpuTime {
    std::uint32_t gpu = 0;
    double active_us = 0;
    double idle_held_us = 0;
};

/// Totals for one identity (indexes the caller's identity table).
struct IdentityTotals {
    double active_us = 0;
    double idle_held_us = 0;
    double idle_held_mib_us = 0;
    std::uint64_t ticks = 0;             ///< card-ticks in which the identity had a process
    std::uint64_t holder_ticks = 0;      ///< card-ticks in which it had a holder process
    std::vector<IdentityGpuTime> by_gpu; ///< the same active and idle-held time, per card
};

/// A stretch of the window with no card-tick at all (daemon down): "no data", never idle.
struct Gap {
    TimeUs from = 0;
    TimeUs to = 0;
};

/// Maps a UTC time to (weekday 0 = Sunday, hour 0–23) in the report's time zone.
using WeekdayHourFn = std::function<std::pair<int, int>(TimeUs)>;

/// Sums classification, attribution, buckets, waste pools and card profiles, the weekday × hour
/// grid and coverage. Ticks must be added in non-decreasing t0 order (for gap detection). Pure: no
/// I/O. Office hours (pools.hpp) are judged in the zone of `weekday_hour`.
class WindowAccumulator {
  public:
    /// `nobody` is the identity index that receives active time with no visible process.
    WindowAccumulator(Thresholds thresholds, std::uint32_t nobody, WeekdayHourFn weekday_hour);

    /// Adds one card-tick.
    void add(const CardTick& tick);

    const Thresholds& thresholds() const { return m_thresholds; }
    const StateTimes& states() const { return m_states; }
    const std::array<DurationUs, k_bucket_count>& bucket_us() const { return m_bucket_us; }
    std::uint64_t ticks() const { return m_ticks; }
    /// Indexed by the GPU index of the ticks; entries with ticks == 0 were absent.
    const std::vector<GpuTotals>& gpus() const { return m_gpus; }
    /// Indexed by identity index; entries with ticks == 0 never appeared.
    const std::vector<IdentityTotals>& identities() const { return m_identities; }
    /// [weekday][hour] state times.
    const std::array<std::array<StateTimes, 24>, 7>& heatmap() const { return m_heatmap; }
    std::optional<TimeUs> first() const { return m_first; }
    std::optional<TimeUs> last_end() const { return m_last_end; }
    /// Gaps longer than twice the local tick duration (and at least 1 minute) between ticks.
    const std::vector<Gap>& gaps() const { return m_gaps; }

  private:
    Thresholds m_thresholds;
    std::uint32_t m_nobody;
    WeekdayHourFn m_weekday_hour;
    StateTimes m_states;
    std::array<DurationUs, k_bucket_count> m_bucket_us{};
    std::uint64_t m_ticks = 0;
    std::vector<GpuTotals> m_gpus;
    std::vector<IdentityTotals> m_identities;
    std::array<std::array<StateTimes, 24>, 7> m_heatmap{};
    std::optional<TimeUs> m_first;
    std::optional<TimeUs> m_last_end;
    std::vector<Gap> m_gaps;
    std::vector<IdentityShare> m_shares;
    std::vector<Presence> m_present;
    std::int64_t m_cached_quarter = std::numeric_limits<std::int64_t>::min();
    std::pair<int, int> m_cached_cell{0, 0};
};

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// WindowTotals: everything the report needs, accumulated card-tick by card-tick (or hour by hour
// from rollups) over a window.
#pragma once

#include "audit/allocations.hpp"
#include "audit/attribute.hpp"
#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/fault_loss.hpp"
#include "audit/health.hpp"
#include "audit/pools.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace gua::audit {

/// How a card's recorded time was measured. by_source_us: card-time whose utilization was
/// measured, by the utilization source of its card-tick (index: telemetry::UtilSource); together
/// with util_unknown_us it is the card's whole recorded time. holders_unknown_us is part of the
/// measured time (below the active threshold while the process lists could not be read), and so
/// is allocation_unknown_us (idle, not held, while a configured allocation source was unreadable:
/// neither truly idle nor allocated-unused).
struct Provenance {
    std::array<DurationUs, 4> by_source_us{};
    DurationUs util_unknown_us = 0;    ///< utilization unknown (lost samples, lost GPU, no reading)
    DurationUs holders_unknown_us = 0; ///< below the active threshold, process lists unreadable
    DurationUs no_reading_us = 0; ///< of util_unknown_us: ticks with no utilization at all (MIG)
    DurationUs allocation_unknown_us = 0; ///< idle, not held, allocation unknown (flagged)

    Provenance& operator+=(const Provenance& o);
    friend bool operator==(const Provenance&, const Provenance&) = default;
};

/// Totals for one card.
struct GpuTotals {
    StateTimes states;
    Provenance provenance;
    std::array<DurationUs, k_bucket_count> bucket_us{};
    std::uint64_t ticks = 0;
    /// Time of its card-ticks that an earlier card-tick of the same card (another run writing
    /// into the same database, a clock stepped back) had already covered: counted once, not in
    /// `states`.
    DurationUs overlap_us = 0;
    PoolTimes pools{};           ///< waste pools (disjoint slices of the measured time)
    CardProfile profile;         ///< patterns, memory and time of day for the recommender
    HealthTotals health;         ///< energy and the other health readings (audit/health.hpp)
    AllocationMatrix allocation; ///< its time by allocation × state (all zero without a source)

    GpuTotals& operator+=(const GpuTotals& o);
};

/// Moves the office-hours split of `totals` (idle-held and idle pools, profile office time)
/// entirely to off-hours (`to_off_hours`) or to office hours.
void move_office_split(GpuTotals& totals, bool to_off_hours);

/// One identity's attributed time on one card (for pricing by card model).
struct IdentityGpuTime {
    std::uint32_t gpu = 0;
    DurationUs active_us = 0;
    DurationUs idle_held_us = 0;
};

/// Totals for one identity (indexes the caller's identity table), in exact integers.
struct IdentityTotals {
    DurationUs active_us = 0;
    DurationUs idle_held_us = 0;
    std::int64_t idle_held_mib_ms = 0;   ///< Σ over card-ticks of ⌊idle-held MiB·µs / 1000⌋
    std::uint64_t ticks = 0;             ///< card-ticks in which the identity had a process
    std::uint64_t holder_ticks = 0;      ///< card-ticks in which it had a holder process
    std::vector<IdentityGpuTime> by_gpu; ///< the same active and idle-held time, per card
    IdentityHealth health;               ///< energy of its attributed time
    /// Of active_us and idle_held_us: time on cards no allocation owned while an allocation source
    /// was known to say so (use outside the scheduler); 0 without allocations.
    DurationUs unallocated_active_us = 0;
    DurationUs unallocated_idle_held_us = 0;

    IdentityTotals& operator+=(const IdentityTotals& o);
};

/// A stretch of the window with no card-tick at all (daemon down): "no data", never idle.
struct Gap {
    TimeUs from = 0;
    TimeUs to = 0;
    friend bool operator==(const Gap&, const Gap&) = default;
};

/// Coverage of a run of card-ticks: its first tick, its end and the gaps between its own ticks.
struct CoverageSummary {
    TimeUs first_t0 = 0;
    DurationUs first_duration_us = 0;
    TimeUs last_end = 0;
    std::vector<Gap> gaps;
};

/// Detects gaps in a sequence of card-ticks added in non-decreasing t0 order: a gap is a stretch
/// longer than twice the local tick duration (and at least 1 minute) that no tick covers.
class CoverageTracker {
  public:
    /// Adds a tick [t0, t0 + duration_us), or a stretch of ticks whose first tick is that one
    /// and whose latest end is `end`.
    void add(TimeUs t0, DurationUs duration_us, TimeUs end);
    std::optional<TimeUs> first() const { return m_first; }
    std::optional<TimeUs> last_end() const { return m_last_end; }
    const std::vector<Gap>& gaps() const { return m_gaps; }
    /// Appends gaps found elsewhere (those of a rollup's own ticks).
    void append_gaps(const std::vector<Gap>& gaps);
    /// Everything added so far; nullopt when nothing was added.
    std::optional<CoverageSummary> summary() const;

  private:
    std::optional<TimeUs> m_first;
    DurationUs m_first_duration_us = 0;
    std::optional<TimeUs> m_last_end;
    std::vector<Gap> m_gaps;
};

/// One card's totals over a rollup's hours.
struct RollupCard {
    std::uint32_t gpu = 0;
    GpuTotals totals;
    /// End of the card's last tick in the rollup, when known (else its hours' latest end).
    std::optional<TimeUs> last_end;
};

/// One identity's totals over a rollup's hours. Identity 0 stands for `nobody` (active time with
/// no visible process); the accumulator maps it to its own nobody index.
struct RollupIdentity {
    std::uint32_t identity = 0;
    IdentityTotals totals;
};

/// One UTC hour of a rollup: the state times of its cards together (for the heatmap) and the
/// coverage of its ticks.
struct HourSlice {
    TimeUs hour_start = 0;
    /// How the office-hours pools and profile times of its ticks were split: as off-hours (true)
    /// or office hours. Hourly rollups are stored as off-hours; the reader moves them.
    bool off_hours = true;
    StateTimes states;
    CoverageSummary coverage;
};

/// The totals of the card-ticks of consecutive UTC hours (an hourly or a daily rollup), in the
/// form WindowAccumulator can add in one go. `hours` lists the hours that have ticks, ascending.
struct RollupTotals {
    std::vector<RollupCard> cards;
    std::vector<RollupIdentity> identities;
    std::vector<HourSlice> hours;
    /// Per allocation (indexing the caller's AllocationRow table): its time over these hours.
    std::vector<AllocationTotals> allocations;
};

/// Maps a UTC time to (weekday 0 = Sunday, hour 0–23) in the report's time zone.
using WeekdayHourFn = std::function<std::pair<int, int>(TimeUs)>;

/// Receives the state time of card `gpu` over [from, to) as it is added: a card-tick's (the part
/// counted once) or a rollup card's over the rollup's hours.
using SpanSink =
    std::function<void(std::uint32_t gpu, TimeUs from, TimeUs to, const StateTimes& states)>;

/// The most a card-tick may overlap the card's previous one and still be taken as clock jitter
/// (the wall clock slewed against the monotonic clock that measured the previous tick): 0.2 % of
/// the tick, at least 10 ms. Such an overlap is still counted once, but not reported as card time
/// recorded more than once (docs/measurement.md).
constexpr DurationUs overlap_jitter_us(DurationUs duration_us) {
    return std::max<DurationUs>(duration_us / 500, 10 * k_us_per_ms);
}

/// Sums classification, attribution, buckets, waste pools and card profiles, the weekday × hour
/// grid and coverage. Ticks must be added in non-decreasing t0 order (for gap detection). A card's
/// time is counted once: the part of a card-tick that an earlier card-tick of the same card
/// already covered is dropped (the rest keeps its proportions) and counted in
/// GpuTotals::overlap_us (unless within overlap_jitter_us()), so no card's recorded time exceeds
/// wall time. Pure: no I/O. Office hours
/// (pools.hpp) are judged in the zone of `weekday_hour`. Adding a rollup with add_rollup() yields
/// the totals of adding its card-ticks when can_add_rollup() says so (exactly for integer totals;
/// pools and profile sums of fractions up to floating-point rounding).
class WindowAccumulator {
  public:
    /// `nobody` is the identity index that receives active time with no visible process.
    WindowAccumulator(Thresholds thresholds, std::uint32_t nobody, WeekdayHourFn weekday_hour);

    /// Adds one card-tick; the part of it an earlier tick of the same card already covers is
    /// counted once and in overlap_us.
    void add(const CardTick& tick);
    /// Adds one card-tick as it is, overlapping or not (the --interval override, which stretches
    /// every tick to a given length on purpose, as gpu-usage-audit counts them).
    void add_as_recorded(const CardTick& tick);
    /// True when `rollup` (whose ticks all start after every tick added so far) can be added
    /// whole with exactly the result of adding its ticks: each of its hours lies in one heatmap
    /// cell of the report's zone, and at each hour's start no earlier tick ends after the hour's
    /// first tick starts (so no overlap crosses the hour).
    bool can_add_rollup(const RollupTotals& rollup) const;
    /// Adds a whole rollup. Exact when can_add_rollup(); otherwise an approximation (the heatmap
    /// cell of each hour's start, coverage merged as stored).
    void add_rollup(const RollupTotals& rollup);
    /// Passes every card's state time to `sink` as it is added (the report's timeline).
    void set_span_sink(SpanSink sink) { m_span_sink = std::move(sink); }
    /// Counts the idle-held time of card-ticks within `spans` as lost to faults
    /// (audit/fault_loss.hpp); a rollup whose hours meet a span is then never added whole.
    void set_fault_spans(FaultSpans spans) { m_fault_spans = std::move(spans); }

    const Thresholds& thresholds() const { return m_thresholds; }
    const StateTimes& states() const { return m_states; }
    const std::array<DurationUs, k_bucket_count>& bucket_us() const { return m_bucket_us; }
    std::uint64_t ticks() const { return m_ticks; }
    /// Indexed by the GPU index of the ticks; entries with ticks == 0 were absent.
    const std::vector<GpuTotals>& gpus() const { return m_gpus; }
    /// Indexed by identity index; entries with ticks == 0 never appeared.
    const std::vector<IdentityTotals>& identities() const { return m_identities; }
    /// Indexed by the allocation index of the ticks' AllocationShare; empty without allocations.
    const std::vector<AllocationTotals>& allocations() const { return m_allocations; }
    /// Takes the allocation dimension — each card's allocation matrix, the per-allocation
    /// totals and each identity's time outside any allocation — from `raw`, an accumulator fed
    /// the raw card-ticks of the same window: rollups keep the allocated-unused state but not
    /// these, so a window read partly from rollups would show only its raw edges.
    void take_allocations(const WindowAccumulator& raw);
    /// [weekday][hour] state times.
    const std::array<std::array<StateTimes, 24>, 7>& heatmap() const { return m_heatmap; }
    std::optional<TimeUs> first() const { return m_coverage.first(); }
    std::optional<TimeUs> last_end() const { return m_coverage.last_end(); }
    /// Gaps longer than twice the local tick duration (and at least 1 minute) between ticks.
    const std::vector<Gap>& gaps() const { return m_coverage.gaps(); }
    /// Coverage of everything added so far; nullopt when nothing was added.
    std::optional<CoverageSummary> coverage() const { return m_coverage.summary(); }
    /// Wall time of [from, to) with data: from the first tick to the last end, clipped to the
    /// window, less the gaps; 0 when nothing was added or the window is empty.
    DurationUs recorded_us(TimeUs from, TimeUs to) const;

  private:
    std::pair<int, int> cell_of(TimeUs t);
    void add_counted(const CardTick& tick);

    Thresholds m_thresholds;
    std::uint32_t m_nobody;
    WeekdayHourFn m_weekday_hour;
    SpanSink m_span_sink;
    FaultSpans m_fault_spans;
    StateTimes m_states;
    std::array<DurationUs, k_bucket_count> m_bucket_us{};
    std::uint64_t m_ticks = 0;
    std::vector<GpuTotals> m_gpus;
    std::vector<IdentityTotals> m_identities;
    std::vector<AllocationTotals> m_allocations;
    std::array<std::array<StateTimes, 24>, 7> m_heatmap{};
    CoverageTracker m_coverage;
    std::vector<std::optional<TimeUs>> m_card_end; ///< per GPU index: latest end of its ticks
    CardTick m_trimmed;
    std::vector<IdentityShareUs> m_shares;
    std::vector<Presence> m_present;
    std::int64_t m_cached_quarter = std::numeric_limits<std::int64_t>::min();
    std::pair<int, int> m_cached_cell{0, 0};
};

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Per-process memory trends for `gua now` and `gua top`: a least-squares line through a holder's
// recent memory readings, its growth rate, and when the card would be full if it kept growing.
#pragma once

#include "audit/streak.hpp"
#include "core/units.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit {

/// One memory reading of a process: the end of its card-tick and the MiB it held.
struct MemorySample {
    TimeUs t = 0;
    std::int64_t mib = 0;
};

/// The line through a process's memory readings.
struct MemoryTrend {
    double mib_per_hour = 0; ///< slope of the least-squares line
    double r2 = 0;           ///< how well the line fits (1: exactly; flat readings count as 1)
    DurationUs span_us = 0;  ///< from the first reading to the last
    std::size_t samples = 0;
};

/// Readings older than this before the newest one are not part of the trend: a process's
/// allocation pattern changes over hours (epochs, evaluation), a leak shows within minutes.
inline constexpr DurationUs k_trend_window_us = 30 * k_us_per_minute;
/// A trend needs this many readings over at least this long…
inline constexpr std::size_t k_trend_min_samples = 4;
inline constexpr DurationUs k_trend_min_span_us = 20 * k_us_per_second;
/// …and counts as growth when the line fits this well and rose at least this much over its span
/// (allocators grow in blocks of 2–20 MiB: smaller rises are noise).
inline constexpr double k_growth_min_r2 = 0.8;
inline constexpr std::int64_t k_growth_min_rise_mib = 64;

/// The least-squares line through `samples` (any order); nullopt with fewer than
/// k_trend_min_samples or a span under k_trend_min_span_us.
std::optional<MemoryTrend> memory_trend(const std::deque<MemorySample>& samples);

/// True when `trend` is linear growth: positive slope, r2 ≥ k_growth_min_r2 and a rise of at
/// least k_growth_min_rise_mib over its span.
bool is_growing(const MemoryTrend& trend);

/// How long until `free_mib` more are used at the trend's rate; nullopt unless it is growing.
std::optional<DurationUs> time_to_full(const MemoryTrend& trend, std::int64_t free_mib);

/// One entry of a card's process lists: the process and the MiB the driver gave for it (nullopt:
/// unknown).
struct MemoryReading {
    ProcessKey key;
    std::optional<std::int64_t> mib;
};

class TrendBook;

/// Adds the readings of one card-tick ending at `end` to `book`, one sample per process: a
/// process listed more than once (compute and graphics) holds the sum of its entries, and one
/// with any unknown entry adds no sample (a partial sum would read as a drop).
void add_card_readings(TrendBook& book, const std::string& uuid, TimeUs end,
                       const std::vector<MemoryReading>& readings);

/// Recent memory readings of every holding (card and process), pruned to k_trend_window_us.
class TrendBook {
  public:
    /// Adds one reading of `key`; drops its readings older than the window before `sample.t`
    /// and readings at or after it (a re-read of the same tick replaces them).
    void add(const HoldingKey& key, MemorySample sample);
    /// The trend of `key`, or nullopt (too few readings, unknown key).
    std::optional<MemoryTrend> trend(const HoldingKey& key) const;
    /// Forgets holdings without a reading since `t` (processes gone).
    void forget_before(TimeUs t);

  private:
    std::map<HoldingKey, std::deque<MemorySample>> m_samples;
};

} // namespace gua::audit

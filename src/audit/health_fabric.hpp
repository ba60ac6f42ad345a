// SPDX-License-Identifier: Apache-2.0
// Interconnect and bus health of a card (docs/health.md, "NVLink, PCIe and row remapping"):
// NVLink error counts and link states, PCIe link generation and width against their maxima, the
// PCIe replay counter and the row remapper's failure flag, summed card-tick by card-tick.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"

#include <array>
#include <cstdint>
#include <optional>

namespace gua::audit {

/// The NVLink error counters, in report order.
enum class NvlinkError : std::uint8_t { replay = 0, recovery = 1, crc = 2 };
inline constexpr std::size_t k_nvlink_error_count = 3;
/// Their names in JSON and in the `kind` label of /metrics, in NvlinkError order.
inline constexpr std::array<const char*, k_nvlink_error_count> k_nvlink_error_names{
    "replay", "recovery", "crc"};

/// Rates from which a card gets a finding, per hour of card time with the counter read. DCGM's
/// health watches (dcgm_gpu_hardware_limits.h): any NVLink replay or recovery error (limit 1), CRC
/// errors from 100 per second, PCIe replays above 8 per minute (the driver's recommendation).
inline constexpr std::array<double, k_nvlink_error_count> k_nvlink_errors_per_hour{1, 1,
                                                                                   100.0 * 3600};
inline constexpr double k_pcie_replays_per_hour = 8.0 * 60;
/// Share of a card's active time (with the link read) below its PCIe maximum from which it gets
/// a finding. Only active time counts: an idle card lowers its link generation to save power.
inline constexpr double k_pcie_degraded_finding_share = 0.05;

/// A time span [first, last_end) of card-ticks that showed something (0, 0: none).
struct SeenSpan {
    TimeUs first_us = 0;
    TimeUs last_end_us = 0;
    void add(TimeUs t0, TimeUs end);
    SeenSpan& operator+=(const SeenSpan& o);
    friend bool operator==(const SeenSpan&, const SeenSpan&) = default;
};

/// The interconnect and bus totals of one card. Every `known` time is card time whose card-ticks
/// had the reading: 0 is "n/a" (never read), not "no errors".
struct FabricTotals {
    std::array<DurationUs, k_nvlink_error_count> nvlink_known_us{};
    std::array<std::int64_t, k_nvlink_error_count> nvlink_errors{}; ///< Σ increases
    SeenSpan nvlink_errors_seen;                                    ///< ticks with any error
    DurationUs links_known_us = 0;     ///< time with the links present and active read (≥ 1 link)
    DurationUs links_down_us = 0;      ///< of it, time with fewer links active than present
    std::int64_t links = 0;            ///< the most links present
    std::int64_t links_active_min = 0; ///< the fewest active while some were down
    SeenSpan links_down_seen;
    DurationUs pcie_known_active_us = 0;    ///< active time with current and maximum link read
    DurationUs pcie_degraded_active_us = 0; ///< of it, below the maximum generation or width
    std::int64_t pcie_gen_max = 0, pcie_width_max = 0; ///< the maxima read
    std::int64_t pcie_gen_low = 0, pcie_width_low = 0; ///< the lowest while degraded and active
    SeenSpan pcie_degraded_seen;
    DurationUs pcie_replay_known_us = 0; ///< time between consecutive replay counter readings
    std::int64_t pcie_replays = 0;       ///< Σ increases of the counter over that time
    /// The replay counter as a running total (card-ticks and rollup hours come in time order):
    /// the time with a reading (0: never read, the readings below mean nothing), the first
    /// reading and its tick's time (the increase to it is counted when totals of an earlier span
    /// are added before), and the latest reading.
    DurationUs pcie_replay_read_us = 0;
    std::int64_t pcie_replay_first = 0;
    DurationUs pcie_replay_first_us = 0;
    std::int64_t pcie_replay_last = 0;
    DurationUs remap_known_us = 0;  ///< time with the remapper's failure flag read
    DurationUs remap_failed_us = 0; ///< of it, time with the flag set
    SeenSpan remap_failed_seen;

    /// Errors per hour of known time of `kind`; nullopt when never read.
    std::optional<double> nvlink_rate(NvlinkError kind) const;
    /// PCIe replays per hour of known time; nullopt when never read twice.
    std::optional<double> pcie_replay_rate() const;
    FabricTotals& operator+=(const FabricTotals& o);
    friend bool operator==(const FabricTotals&, const FabricTotals&) = default;
};

/// Adds the interconnect and bus readings of `tick` (classified into `states`) to `out`.
void add_fabric(const CardTick& tick, const StateTimes& states, FabricTotals& out);

} // namespace gua::audit

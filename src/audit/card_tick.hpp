// SPDX-License-Identifier: Apache-2.0
// The audit's input: one card over one interval, with its processes, as read back from a store.
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit {

/// Classification thresholds (configuration; defaults from DESIGN.md).
struct Thresholds {
    double active_util_pct = 10.0;   ///< SM utilization at or above this is active
    std::int64_t held_mib = 100;     ///< holders together holding more than this hold the card
    bool graphics_is_holder = false; ///< count graphics-only contexts (Xorg) as holders
    friend bool operator==(const Thresholds&, const Thresholds&) = default;
};

/// The four efficiency buckets of utilization: <10 %, 10–70 %, 70–90 %, ≥90 %.
enum class Bucket : std::uint8_t { idle = 0, underutilized = 1, productive = 2, compute_bound = 3 };
inline constexpr std::size_t k_bucket_count = 4;
/// Lower bounds of the buckets in percent.
inline constexpr std::array<double, k_bucket_count> k_bucket_floor_pct{0.0, 10.0, 70.0, 90.0};

/// Returns the bucket of a utilization value in percent.
Bucket bucket_of(double util_pct);

/// One process on a card during a card-tick. `identity` indexes the caller's identity table.
struct ProcTick {
    std::uint32_t identity = 0;
    telemetry::ProcessType type = telemetry::ProcessType::compute;
    std::optional<std::int64_t> mem_used_mib; ///< nullopt: unknown (still counts as holding)
    std::optional<double> sm_util_pct;        ///< nullopt: no per-process reading
    /// Its part of the card-tick's active time as attributed by the sampler (poll by poll);
    /// nullopt (older recordings, no per-process reading): split by SM share of the tick.
    std::optional<DurationUs> active_us;
    /// Its part of the card-tick's idle-held time as decided by the sampler poll by poll (from
    /// the memory held together at each poll); nullopt (older recordings, non-holders): split
    /// by memory over the tick.
    std::optional<DurationUs> idle_held_us;
};

/// An allocation's overlap with one card-tick. `allocation` indexes the caller's allocation table
/// (AllocationRow).
struct AllocationShare {
    std::uint32_t allocation = 0;
    DurationUs overlap_us = 0;
    friend bool operator==(const AllocationShare&, const AllocationShare&) = default;
};

/// One allocation (Slurm job, pod, reservation) as the audit sees it: who it belongs to and when
/// it held cards within the window.
struct AllocationRow {
    std::string kind;    ///< "slurm-job", "pod" or "reservation"
    std::string id;      ///< Slurm job id, "<namespace>/<pod>", or a reservation's name
    std::string user;    ///< owner user name; empty when the source did not say
    std::string account; ///< Slurm account or Kubernetes namespace; empty when not said
    std::string host;    ///< the host it was recorded on
    TimeUs first_us = 0; ///< earliest time it owned a card (in the recording)
    TimeUs last_us = 0;  ///< end of the last time it owned a card
    friend bool operator==(const AllocationRow&, const AllocationRow&) = default;
};

/// One card over [t0, t0 + duration). `gpu` indexes the caller's GPU table. When utilization was
/// not measured (MIG, unsupported) active_us is nullopt and the buckets are all zero.
struct CardTick {
    std::uint32_t gpu = 0;
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    std::optional<DurationUs> active_us; ///< time at or above the recording's active threshold
    std::array<DurationUs, k_bucket_count> bucket_us{};
    std::optional<double> util_pct; ///< time-weighted mean SM utilization
    telemetry::UtilSource util_source = telemetry::UtilSource::none; ///< how it was measured
    /// Time whose utilization is unknown; active_us and bucket_us cover the rest.
    DurationUs unmeasured_us = 0;
    /// Measured time below the active threshold with no holder listed (truly idle).
    DurationUs idle_unlisted_us = 0;
    /// Measured time below the active threshold with the holders unknown (unmeasured).
    DurationUs idle_unknown_us = 0;
    telemetry::CardReadings readings; ///< per-card fields (telemetry/card_fields.def)
    std::vector<ProcTick> processes;
    /// The card's allocation crossed with its state (all zero without an allocation source).
    telemetry::AllocationTimes allocation;
    /// The allocations that owned the card during the tick, each with its overlap.
    std::vector<AllocationShare> allocations;
};

} // namespace gua::audit

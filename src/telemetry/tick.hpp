// SPDX-License-Identifier: Apache-2.0
// Tick: one sampling interval folded from polls — what the store, the exporter and policy consume.
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::telemetry {

/// One process on one card over a tick (the union of the tick's polls).
struct ProcessTick {
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> start_ticks; ///< /proc start time; nullopt when unknown
    Identity identity;
    ProcessType type = ProcessType::compute;
    std::optional<std::int64_t> mem_used_mib; ///< the largest reading of the tick
    std::optional<double> sm_util_pct;        ///< time-weighted mean over polls that had one
    /// This process's part of the card's active time, attributed poll by poll by SM share;
    /// nullopt when there was no per-process reading.
    std::optional<DurationUs> active_us;
    /// This process's part of the card's idle-held time: each poll's idle time held together
    /// above the threshold, split among that poll's holders by the memory each held then.
    /// nullopt for non-holders, unmeasured cards and older recordings.
    std::optional<DurationUs> idle_held_us;
};

/// What the host's allocation sources (Slurm job mapping, kubelet pod resources) said about one
/// card over one tick, crossed with the card's state (docs/allocations.md). All zero on a host
/// without an allocation source, and then a card-tick reads exactly as without allocations.
struct AllocationTimes {
    DurationUs allocated_us = 0; ///< time an allocation owned the card, whatever its state
    DurationUs active_us = 0;    ///< of allocated_us: active
    DurationUs idle_held_us = 0; ///< of allocated_us: idle-held
    /// Of allocated_us: allocated-unused (measured idle time, the card not held). The rest of
    /// allocated_us (active, idle-held, this) is unmeasured.
    DurationUs unused_us = 0;
    /// Time the allocation was unknown (a configured source unreadable, not yet read or stalled).
    DurationUs unknown_us = 0;
    /// Of unknown_us: measured idle time, the card not held. Neither truly idle nor
    /// allocated-unused: it counts as unmeasured, flagged with its reason.
    DurationUs unknown_idle_us = 0;

    bool any() const { return allocated_us != 0 || unknown_us != 0; }
    friend bool operator==(const AllocationTimes&, const AllocationTimes&) = default;
};

/// One allocation that owned a card during part of a tick.
struct AllocationOwner {
    std::string kind;    ///< "slurm-job", "pod" or "reservation" (alloc::kind_name)
    std::string id;      ///< Slurm job id, "<namespace>/<pod>", or a reservation's name
    std::string user;    ///< the owner's user name; empty when the source does not say
    std::string account; ///< Slurm account or Kubernetes namespace; empty when not said
    TimeUs begin = 0;    ///< its overlap with the tick: [begin, end)
    TimeUs end = 0;
    friend bool operator==(const AllocationOwner&, const AllocationOwner&) = default;
};

/// One card over one tick. Utilization is summarised as time in the four efficiency buckets
/// (<10, 10–70, 70–90, ≥90 %) and time at or above the active threshold.
struct CardTickRecord {
    DeviceInfo device;
    UtilSource util_source = UtilSource::none;
    std::optional<double> util_pct;      ///< time-weighted mean SM %
    std::optional<DurationUs> active_us; ///< nullopt when utilization was not measured
    std::array<DurationUs, 4> bucket_us{};
    std::uint32_t util_samples = 0; ///< sub-samples folded into this card-tick
    /// Time whose utilization is unknown (lost ring samples, a lost GPU, failed reads); active_us
    /// and bucket_us cover the measured rest, duration − unmeasured_us.
    DurationUs unmeasured_us = 0;
    /// Measured time below the active threshold during which the card was not held: no holder
    /// was listed, or the holders listed together held no more than the held threshold (decided
    /// poll by poll). The rest of the measured idle time, less idle_unknown_us, is idle-held.
    DurationUs idle_unlisted_us = 0;
    /// Measured time of the polls whose process lists could not be read (holders unknown: neither
    /// active for anyone, idle-held nor truly idle; flagged). Recordings made before this rule
    /// kept the active part of such polls in active_us.
    DurationUs idle_unknown_us = 0;
    CardReadings readings; ///< folded from the polls by each field's rule (card_fields.def)
    int read_errors = 0;
    std::vector<ProcessTick> processes;
    AllocationTimes allocation;               ///< all zero without an allocation source
    std::vector<AllocationOwner> allocations; ///< who owned the card during the tick, in time order
};

/// All cards over [t0, t0 + duration).
struct Tick {
    std::uint64_t seq = 0; ///< 0-based tick number within the run
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    std::vector<CardTickRecord> cards;
    std::vector<std::string> lost_uuids; ///< cards that fell off the bus during the tick
};

} // namespace gua::telemetry

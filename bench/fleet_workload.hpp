// SPDX-License-Identifier: Apache-2.0
// The reference workload of gpu-usage-audit's measurements (§10 of its reference): 12 GPUs with
// jobs, idle-held tails and free spells on a weekday pattern, with the provenance a real recording
// has (per-process SM shares and active time, rare measurement faults) and every health reading
// (power following the load, energy, temperatures, clocks and their event reasons, limits, ECC,
// ghost memory, GPM). Used by benchmarks and by tests.
#pragma once

#include "core/time.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <functional>

namespace gua::bench {

/// Shape of the generated history.
struct FleetOptions {
    int gpus = 12;
    std::int64_t ticks = 86400; ///< 30 days at 30 s
    DurationUs interval_us = 30 * k_us_per_second;
    TimeUs start = 1777593600LL * k_us_per_second; ///< 2026-05-01T00:00:00Z (a Friday)
    std::uint64_t seed = 42;
    /// Rare measurement faults as a healthy host has them: about 1 card-tick in 20,000 partly
    /// unmeasured (lost ring samples: util_source partial) and 1 idle one in 20,000 with the
    /// process list unreadable. Off, every card-tick is measured.
    bool measurement_faults = true;
    /// The health readings of schema 6 (power limit, energy, clocks-event time, ...). Off, a card
    /// records what it did before them: memory, power, temperature, SM clock and event bits.
    bool health = true;
    /// The GPM readings of schema 7 (SM active and occupancy, tensor, DRAM, FP pipes), as a
    /// Hopper card reports them: off (n/a, a pre-Hopper fleet), steady (one level per job, 0 while
    /// not running) or per_tick (following each tick's utilization, the worst case for storage).
    enum class Gpm : std::uint8_t { off, steady, per_tick };
    Gpm gpm = Gpm::steady;
};

/// Ground truth counted while generating, in card-ticks (one sample per tick; a card-tick with
/// a measurement fault counts by its utilization as if it had none).
struct FleetTruth {
    std::int64_t active = 0;
    std::int64_t idle_held = 0;
    std::int64_t truly_idle = 0;
    std::int64_t processes = 0;
    std::int64_t faults = 0; ///< card-ticks with unmeasured time or unknown holders
};

/// Generates `options.ticks` ticks deterministically and hands each to `sink` in time order.
FleetTruth generate_fleet(const FleetOptions& options,
                          const std::function<void(const telemetry::Tick&)>& sink);

} // namespace gua::bench

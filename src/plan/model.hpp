// SPDX-License-Identifier: Apache-2.0
// The plan's demand: units of work (a process session, or a gang of one allocation) with the
// times they held cards, as replayed from raw card-ticks; and the card pools they ran on.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::plan {

/// A stretch [begin, end) during which a unit held a card, active or idle-held throughout.
struct Phase {
    TimeUs begin = 0;
    TimeUs end = 0;
    bool active = false;
    friend bool operator==(const Phase&, const Phase&) = default;
};

/// Where a unit was recorded: one card (store gpu id) and its phases there, in time order.
struct Presence {
    std::int64_t gpu = 0;
    std::vector<Phase> phases;
};

/// What a unit is: one process (pid + start time), the processes of one allocation (a gang,
/// never split across hosts), or busy card time that no listed process accounts for.
enum class UnitKind : std::uint8_t { process, gang, unattributed };

/// One unit of demand. Memory and compute are per GPU (a gang's on its fullest card).
struct Unit {
    UnitKind kind = UnitKind::process;
    std::string label;         ///< user and command, or the allocation's id
    std::size_t pool = 0;      ///< index in Demand::pools
    int gpus = 1;              ///< cards it needs at once (a gang's recorded cards)
    bool interactive = false;  ///< a notebook kernel (its waits are held to the tighter objective)
    std::int64_t peak_mib = 0; ///< largest memory held on one card
    bool memory_unknown = false;   ///< a reading was missing: sized as the whole card
    double peak_compute_pct = 0;   ///< largest compute share of one card, percent
    bool compute_measured = false; ///< had per-process (or GPM) readings
    bool compute_gpm = false;      ///< compute from GPM SM activity (else a temporal SM %)
    DurationUs active_us = 0;      ///< card time it was active (summed over its cards)
    double compute_pct_us = 0;     ///< compute share × time while active (for the mean)
    /// Its mean compute share of a card while active, percent (100 when not measured).
    double mean_compute_pct() const {
        return compute_measured && active_us > 0 ? compute_pct_us / static_cast<double>(active_us)
                                                 : 100.0;
    }
    std::vector<Presence> presences; ///< per card, as recorded
    std::vector<Phase> phases;       ///< union over its cards: held, active when any card was
};

/// The cards of one model (name and memory) that the recording saw.
struct Pool {
    std::string model;                  ///< e.g. "NVIDIA H100 80GB HBM3"
    std::int64_t memory_mib = 0;        ///< per card
    int gpus = 0;                       ///< distinct cards recorded
    int gpus_per_host = 1;              ///< most cards of this model seen on one host
    std::optional<double> idle_power_w; ///< median power of its truly idle card-ticks
};

/// What the replay can and cannot know about the window (printed with every answer).
struct Coverage {
    DurationUs window_us = 0;       ///< the window asked for
    DurationUs recorded_us = 0;     ///< wall time covered by at least one raw card-tick
    DurationUs card_us = 0;         ///< card time recorded
    DurationUs unmeasured_us = 0;   ///< of card_us: utilization unknown
    DurationUs snapshot_us = 0;     ///< of card_us: measured by a single snapshot reading
    DurationUs unattributed_us = 0; ///< busy card time with no listed process
    std::int64_t raw_ticks = 0;     ///< card-ticks replayed
    std::optional<DurationUs> raw_retention_us; ///< how long raw ticks are kept (nullopt: ever)
};

/// The demand of a window: its units, the card pools, and the recorded wall time (merged
/// intervals of raw card-ticks, in time order).
struct Demand {
    TimeUs from = 0;
    TimeUs to = 0;
    std::vector<Unit> units;
    std::vector<Pool> pools;
    std::vector<Phase> recorded; ///< `active` unused
    Coverage coverage;
};

} // namespace gua::plan

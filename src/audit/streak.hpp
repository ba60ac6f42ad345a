// SPDX-License-Identifier: Apache-2.0
// Idle-held streaks: how long each process has continuously idle-held a card, folded forward tick
// by tick (daemon, `gua top`) or rewound from the newest tick backwards (history at start-up).
#pragma once

#include "core/time.hpp"

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit {

/// A process that cannot be confused with a later one reusing its pid.
struct ProcessKey {
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> start_ticks; ///< /proc start time; nullopt when unknown

    friend auto operator<=>(const ProcessKey&, const ProcessKey&) = default;
};

/// One process's memory on one card.
struct HoldingKey {
    std::string gpu_uuid;
    ProcessKey process;

    friend auto operator<=>(const HoldingKey&, const HoldingKey&) = default;
};

/// One process seen on a card in one card-tick, judged by audit::is_idle_held.
struct HoldingSeen {
    ProcessKey process;
    bool idle_held = false;
};

/// A continuous idle-held streak. A stretch without any card-tick of the card (daemon down) does
/// not break it when the same process is idle-held on both sides, but that stretch is not counted:
/// idle_us is observed idle-held time only, so policy never acts on time nobody saw.
struct Streak {
    TimeUs since = 0;       ///< start of the first idle-held card-tick of the streak
    TimeUs last_end = 0;    ///< end of the newest idle-held card-tick
    DurationUs idle_us = 0; ///< observed idle-held time within the streak

    friend bool operator==(const Streak&, const Streak&) = default;
};

/// Streaks folded forward. Pure; not thread-safe.
class StreakBook {
  public:
    /// Folds one card-tick of `gpu_uuid` covering [t0, t0 + duration_us): each process idle-held
    /// in it extends its streak (or starts one); every other streak on that card ends. Card-ticks
    /// of one card must come in time order.
    void observe(const std::string& gpu_uuid, TimeUs t0, DurationUs duration_us,
                 const std::vector<HoldingSeen>& seen);
    /// Sets the streak of `key`, e.g. one found by StreakRewind in the recorded history.
    void seed(const HoldingKey& key, const Streak& streak);
    /// The streak of `key`, or nullopt when it is not idle-held as of its card's newest tick.
    std::optional<Streak> find(const HoldingKey& key) const;
    /// Every open streak.
    const std::map<HoldingKey, Streak>& streaks() const { return m_streaks; }

  private:
    std::map<HoldingKey, Streak> m_streaks;
};

/// The mirror image of StreakBook::observe: walks one card's card-ticks newest first and finds
/// the streaks of the processes idle-held in the newest one. Pure.
class StreakRewind {
  public:
    /// Starts from the card's newest card-tick.
    StreakRewind(TimeUs t0, DurationUs duration_us, const std::vector<HoldingSeen>& newest);
    /// Folds the next older card-tick; returns false once every streak has ended (read no more).
    bool older(TimeUs t0, DurationUs duration_us, const std::vector<HoldingSeen>& seen);
    /// True while some streak may still reach further back.
    bool open() const { return !m_open.empty(); }
    /// The streaks found (open or ended), by process.
    const std::map<ProcessKey, Streak>& streaks() const { return m_streaks; }

  private:
    std::map<ProcessKey, Streak> m_streaks;
    std::vector<ProcessKey> m_open;
};

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Sampler: the tick loop — polls the source every ≤ 5 s (more often when the source's sample
// buffers need it), folds polls into ticks on an anti-drift monotonic schedule, and hands each
// finished tick to a callback.
#pragma once

#include "alloc/source.hpp"
#include "core/clock.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"
#include "telemetry/device_source.hpp"
#include "telemetry/tick.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::sampler {

/// How the sampler runs.
struct SamplerOptions {
    DurationUs interval_us = 30 * k_us_per_second; ///< length of a tick
    /// Polls happen at least this often, and at least as often as the source's
    /// max_poll_span_us() asks.
    DurationUs max_poll_us = 5 * k_us_per_second;
    double active_threshold_pct = 10.0;
    std::optional<std::uint64_t> max_ticks; ///< stop after this many ticks (demo, tests)
    bool graphics_is_holder = false; ///< graphics contexts count as holders (idle time unlisted)
    /// Holders listed together at a poll holding more than this hold the card during the poll.
    std::int64_t held_mib = 100;
    /// The host's allocation sources (docs/allocations.md), crossed with every card-tick; it
    /// must outlive the sampler. nullptr: card-ticks carry no allocation.
    alloc::AllocationSource* allocations = nullptr;
};

/// Runs the loop on one thread.
class Sampler {
  public:
    /// The source, clock and resolver must outlive the sampler.
    Sampler(telemetry::DeviceSource& source, Clock& clock, identity::Resolver& resolver,
            SamplerOptions options);

    /// Polls and ticks until `stop` is set or max_ticks is reached. A tick in progress when stop
    /// is set is finished early (shorter duration) and delivered. `on_tick` exceptions propagate.
    /// `on_overrun` (optional) is told how late a tick started when the loop fell behind.
    void run(const std::atomic<bool>& stop,
             const std::function<void(const telemetry::Tick&)>& on_tick,
             const std::function<void(DurationUs)>& on_overrun = {});

    /// Number of ticks delivered so far.
    std::uint64_t ticks() const { return m_ticks; }

    /// Shortest step between two polls, whatever the source asks.
    static constexpr DurationUs k_min_poll_step_us = 10 * k_us_per_ms;

    /// How far the wall clock may drift from the monotonic clock over `span_us` and still be
    /// taken as jitter, not a step: 0.1 % of the span (twice what NTP slews), at least 5 ms.
    static constexpr DurationUs wall_jitter_us(DurationUs span_us) {
        return std::max<DurationUs>(span_us / 1000, 5 * k_us_per_ms);
    }
    /// How far the wall clock stepped during `previous`, given the wall time of the poll that
    /// ended it: that time − `previous`'s end (negative: stepped back), 0 within wall_jitter_us().
    static DurationUs wall_step(const telemetry::Tick& previous, TimeUs wall_now);
    /// The longest step of the wall clock the ticks bridge (a forward step's time unmeasured, a
    /// backward step's time recorded once); a longer one (a clock set at boot) starts the next
    /// tick at the wall time, so that no card-tick spans more than this beyond its interval.
    static constexpr DurationUs k_max_bridged_step_us = 10 * 60 * k_us_per_second;
    /// How often the sampler asks, between polls, which watched processes exited, so that an
    /// exit inside a poll span is placed within half of this (docs/measurement.md).
    static constexpr DurationUs k_exit_check_us = 250 * k_us_per_ms;

  private:
    struct RunState;
    /// One poll of the tick loop: reads every card and folds the poll into the tick.
    void poll_once(RunState& s);
    /// Finishes the tick (when it spans any time), hands it to `on_tick` and starts the next.
    void close_tick(RunState& s, const std::function<void(const telemetry::Tick&)>& on_tick);
    void refresh_devices();
    /// Sleeps until `deadline`, asking the resolver every k_exit_check_us which watched processes
    /// exited meanwhile (appended to m_exits); asks once more at the end.
    void sleep_watching(std::int64_t deadline, const std::atomic<bool>& stop);
    /// Appends the exits the resolver saw since the previous check, placed at `now`'s and the
    /// previous check's middle.
    void check_exits(std::int64_t now);
    /// The deadline of the poll after the one planned at `previous` (monotonic µs), given the
    /// time `now`, so that polls are evenly spaced, no further apart than the source affords,
    /// never bunched after a late poll, and the last one falls exactly on `tick_end`.
    std::int64_t next_poll_deadline(std::int64_t previous, std::int64_t now,
                                    std::int64_t tick_end) const;

    telemetry::DeviceSource& m_source;
    Clock& m_clock;
    identity::Resolver& m_resolver;
    SamplerOptions m_options;
    std::uint64_t m_ticks = 0;
    std::unordered_map<std::string, telemetry::DeviceInfo> m_devices;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> m_exited; ///< reused by check_exits()
    std::vector<ProcessExit> m_exits;                              ///< since the previous poll
    std::int64_t m_exits_checked = 0; ///< monotonic µs of the previous check
};

} // namespace gua::sampler

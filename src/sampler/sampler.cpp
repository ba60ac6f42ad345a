// SPDX-License-Identifier: Apache-2.0
// The tick loop.
#include "sampler/sampler.hpp"

#include "sampler/fold.hpp"

#include <algorithm>
#include <cstdlib>

namespace gua::sampler {
namespace {

/// The wall time at monotonic instant `mono` (not after now): the two clocks read back to back, the
/// wall time moved back by the monotonic time since `mono`. A pair of reads more than 1 ms apart
/// (the thread lost the CPU between them) is read again: a wall time read late would move the
/// next tick's start, leaving a gap after one tick and an overlap after the next.
TimeUs wall_at(Clock& clock, std::int64_t mono) {
    std::int64_t before = clock.mono_now();
    TimeUs wall = clock.wall_now();
    std::int64_t after = clock.mono_now();
    for (int retry = 0; retry < 3 && after - before > k_us_per_ms; ++retry) {
        before = after;
        wall = clock.wall_now();
        after = clock.mono_now();
    }
    return wall - (before + (after - before) / 2 - mono);
}

} // namespace

Sampler::Sampler(telemetry::DeviceSource& source, Clock& clock, identity::Resolver& resolver,
                 SamplerOptions options)
    : m_source(source), m_clock(clock), m_resolver(resolver), m_options(options) {}

void Sampler::refresh_devices() {
    m_devices.clear();
    for (telemetry::DeviceInfo& d : m_source.devices()) {
        m_devices[d.uuid] = std::move(d);
    }
}

std::int64_t Sampler::next_poll_deadline(std::int64_t previous, std::int64_t now,
                                         std::int64_t tick_end) const {
    // The longest step the source affords, at most max_poll_us; the rest of the tick is split
    // into equal steps no longer than that, so that the tick still ends exactly at tick_end.
    const DurationUs step = std::max<DurationUs>(
        std::min(m_options.max_poll_us, m_source.max_poll_span_us()), k_min_poll_step_us);
    // A poll that ended after the next deadline would have been due moves the plan to now
    // instead of bursting through the missed polls.
    const std::int64_t base = std::max(previous, now - step);
    const std::int64_t remaining = tick_end - base;
    if (remaining <= 0) {
        return tick_end;
    }
    const std::int64_t polls = (remaining + step - 1) / step;
    return polls <= 1 ? tick_end : base + remaining / polls;
}

DurationUs Sampler::wall_step(const telemetry::Tick& previous, TimeUs wall_now) {
    // The wall clock and the monotonic clock that measured the tick's duration disagree by
    // microseconds (NTP slews the wall clock by up to 0.05 %): within that jitter the next tick
    // starts where this one ended, so that one daemon's ticks neither overlap nor leave gaps.
    const DurationUs step = wall_now - (previous.t0 + previous.duration_us);
    return std::abs(step) <= wall_jitter_us(previous.duration_us) ? 0 : step;
}

void Sampler::check_exits(std::int64_t now) {
    m_exited.clear();
    m_resolver.take_exits(m_exited);
    for (const auto& [pid, start] : m_exited) {
        m_exits.push_back(ProcessExit{pid, start, m_exits_checked + (now - m_exits_checked) / 2});
    }
    m_exits_checked = now;
}

void Sampler::sleep_watching(std::int64_t deadline, const std::atomic<bool>& stop) {
    // Only while the resolver watches processes: otherwise one sleep, as before.
    for (std::int64_t now = m_clock.mono_now();
         m_resolver.watching() && now < deadline && !stop.load(); now = m_clock.mono_now()) {
        m_clock.sleep_until(std::min(deadline, now + k_exit_check_us), stop);
        check_exits(m_clock.mono_now());
    }
    m_clock.sleep_until(deadline, stop);
}

/// The tick loop's state between polls (Sampler::run).
struct Sampler::RunState {
    RunState(const audit::Thresholds& thresholds, identity::Resolver& resolver)
        : builder(thresholds, resolver) {}
    TickBuilder builder;
    telemetry::Tick tick;                     ///< reused: finish() overwrites it every tick
    std::vector<telemetry::DevicePoll> polls; ///< reused: poll_into() overwrites it
    std::int64_t tick_start = 0;              ///< monotonic µs the current tick started
    std::int64_t last_poll = 0;               ///< monotonic µs of the previous poll
    TimeUs last_poll_wall = 0;                ///< its wall time
    /// The source measures its poll spans on a timeline anchored at the first poll's wall time
    /// and advanced by the monotonic clock: a step of the wall clock (NTP, an administrator)
    /// must not stretch or shrink a poll span, or the driver's rings would be read against a
    /// span they do not cover (a 60 s forward step made a busy card read idle from then on).
    std::int64_t mono_anchor = 0;
    TimeUs wall_anchor = 0;
    TimeUs t0 = 0; ///< wall time the current tick starts
    /// After the wall clock stepped back, the time it lives again is left out of the ticks (it
    /// was recorded already), so that the ticks neither overlap nor drift from the wall clock.
    DurationUs skip_us = 0;

    TimeUs source_time(std::int64_t mono) const { return wall_anchor + (mono - mono_anchor); }
};

void Sampler::run(const std::atomic<bool>& stop,
                  const std::function<void(const telemetry::Tick&)>& on_tick,
                  const std::function<void(DurationUs)>& on_overrun) {
    const DurationUs interval = std::max<DurationUs>(m_options.interval_us, k_us_per_ms);
    refresh_devices();
    audit::Thresholds thresholds;
    thresholds.active_util_pct = m_options.active_threshold_pct;
    thresholds.graphics_is_holder = m_options.graphics_is_holder;
    thresholds.held_mib = m_options.held_mib;
    RunState s(thresholds, m_resolver);
    s.builder.set_allocations(m_options.allocations, &m_source);
    // The first poll primes the source's cursors; its data covers time before the first tick,
    // except the counters' readings, which are the first tick's baselines.
    // A tick spans exactly from one poll to the next: its start is the end of the previous tick,
    // so a slow write between ticks neither overlaps nor leaves a gap.
    s.tick_start = m_clock.mono_now();
    s.last_poll_wall = wall_at(m_clock, s.tick_start);
    s.mono_anchor = s.tick_start;
    s.wall_anchor = s.last_poll_wall;
    const std::vector<telemetry::DevicePoll> primed = m_source.poll(s.source_time(s.tick_start));
    s.t0 = s.last_poll_wall;
    s.builder.start(s.t0);
    s.builder.prime(primed);
    s.last_poll = s.tick_start;
    m_exits_checked = s.tick_start;

    while (!stop.load() && (!m_options.max_ticks || m_ticks < *m_options.max_ticks)) {
        // Polls within the tick follow the source's affordable span (it may shrink when a
        // driver ring proves short); the tick's end is always tick_start + interval.
        const std::int64_t tick_end = s.tick_start + interval;
        std::int64_t deadline = next_poll_deadline(s.tick_start, m_clock.mono_now(), tick_end);
        for (bool tick_done = false; !tick_done;) {
            sleep_watching(deadline, stop);
            poll_once(s);
            tick_done = deadline >= tick_end || stop.load();
            if (!tick_done) {
                deadline = next_poll_deadline(deadline, m_clock.mono_now(), tick_end);
            }
        }
        close_tick(s, on_tick);
        // Anti-drift: the next tick starts one interval after this one, unless we are more than
        // a whole interval late, in which case we skip ahead without a burst of catch-up ticks.
        s.tick_start += interval;
        const std::int64_t now = m_clock.mono_now();
        if (now - s.tick_start > interval) {
            if (on_overrun) {
                on_overrun(now - s.tick_start);
            }
            s.tick_start = now;
        }
    }
}

void Sampler::poll_once(RunState& s) {
    const std::int64_t now = m_clock.mono_now();
    s.last_poll_wall = wall_at(m_clock, now);
    const std::optional<std::int64_t> boot = m_clock.boot_now();
    check_exits(now);
    m_source.poll_into(s.source_time(now), s.polls);
    const bool unknown = std::any_of(s.polls.begin(), s.polls.end(),
                                     [&](const auto& p) { return !m_devices.contains(p.uuid); });
    if (unknown) {
        refresh_devices();
    }
    const DurationUs skipped = std::min(s.skip_us, now - s.last_poll);
    s.skip_us -= skipped;
    PollTimes times;
    times.end_mono_us = now;
    times.boot_offset_us = boot ? std::optional(*boot - now) : std::nullopt;
    times.exits = m_exits;
    if (now - s.last_poll - skipped > 0) {
        s.builder.add_poll(s.polls, now - s.last_poll - skipped, m_devices, times);
    }
    m_exits.clear();
    s.last_poll = now;
}

void Sampler::close_tick(RunState& s, const std::function<void(const telemetry::Tick&)>& on_tick) {
    if (s.builder.span() <= 0) { // wholly left out after a backward step: not a tick
        s.builder.start(s.t0);
        return;
    }
    s.builder.finish(m_ticks, s.tick);
    on_tick(s.tick);
    ++m_ticks;
    m_resolver.sweep();
    if (m_options.allocations != nullptr) {
        m_options.allocations->forget_before(s.tick.t0); // never asked about again
    }
    // A step of the wall clock: forward, the time it skipped is unmeasured at the start of the
    // next tick; back, the time it lives again is left out. A longer step starts the next tick
    // at the wall time (a gap in coverage, or time recorded twice).
    const DurationUs step = wall_step(s.tick, s.last_poll_wall);
    const bool bridged = std::abs(step) <= k_max_bridged_step_us;
    s.t0 = bridged ? s.tick.t0 + s.tick.duration_us : s.last_poll_wall;
    s.builder.start(s.t0);
    if (bridged) {
        s.builder.add_unmeasured(step);
        s.skip_us += std::max<DurationUs>(-step, 0);
    }
}

} // namespace gua::sampler

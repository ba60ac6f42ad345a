// The tick loop.
#include "sampler/sampler.hpp"

#include "sampler/fold.hpp"

#include <algorithm>

namespace gua::sampler {

Sampler::Sampler(telemetry::DeviceSource& source, Clock& clock, identity::Resolver& resolver,
                 SamplerOptions options)
    : m_source(source), m_clock(clock), m_resolver(resolver), m_options(options) {}

void Sampler::refresh_devices() {
    m_devices.clear();
    for (telemetry::DeviceInfo& d : m_source.devices()) {
        m_devices[d.uuid] = std::move(d);
    }
}

void Sampler::run(const std::atomic<bool>& stop,
                  const std::function<void(const telemetry::Tick&)>& on_tick,
                  const std::function<void(DurationUs)>& on_overrun) {
    const DurationUs interval = std::max<DurationUs>(m_options.interval_us, k_us_per_ms);
    const std::int64_t polls_per_tick =
        std::max<std::int64_t>(1, (interval + m_options.max_poll_us - 1) / m_options.max_poll_us);
    const DurationUs poll_step = interval / polls_per_tick;

    refresh_devices();
    audit::Thresholds thresholds;
    thresholds.active_util_pct = m_options.active_threshold_pct;
    thresholds.graphics_is_holder = m_options.graphics_is_holder;
    TickBuilder builder(thresholds, m_resolver);
    telemetry::Tick tick;                     // reused: finish() overwrites it in place every tick
    std::vector<telemetry::DevicePoll> polls; // reused: poll_into() overwrites it
    // The first poll primes the source's cursors; its data covers time before the first tick.
    // A tick spans exactly from one poll to the next: its start is the wall time of the poll that
    // ended the previous tick, so a slow write between ticks neither overlaps nor leaves a gap.
    std::int64_t tick_start = m_clock.mono_now();
    TimeUs last_poll_wall = m_clock.wall_now();
    m_source.poll(last_poll_wall);
    builder.start(last_poll_wall);
    std::int64_t last_poll = tick_start;

    while (!stop.load() && (!m_options.max_ticks || m_ticks < *m_options.max_ticks)) {
        bool tick_done = false;
        for (std::int64_t k = 1; k <= polls_per_tick && !tick_done; ++k) {
            const std::int64_t deadline =
                k == polls_per_tick ? tick_start + interval : tick_start + k * poll_step;
            m_clock.sleep_until(deadline, stop);
            const std::int64_t now = m_clock.mono_now();
            last_poll_wall = m_clock.wall_now();
            m_source.poll_into(last_poll_wall, polls);
            const bool unknown = std::any_of(polls.begin(), polls.end(), [&](const auto& p) {
                return !m_devices.contains(p.uuid);
            });
            if (unknown) {
                refresh_devices();
            }
            builder.add_poll(polls, now - last_poll, m_devices);
            last_poll = now;
            tick_done = k == polls_per_tick || stop.load();
        }
        builder.finish(m_ticks, tick);
        on_tick(tick);
        ++m_ticks;
        m_resolver.sweep();
        builder.start(last_poll_wall);
        // Anti-drift: the next tick starts one interval after this one, unless we are more than
        // a whole interval late, in which case we skip ahead without a burst of catch-up ticks.
        tick_start += interval;
        const std::int64_t now = m_clock.mono_now();
        if (now - tick_start > interval) {
            if (on_overrun) {
                on_overrun(now - tick_start);
            }
            tick_start = now;
        }
    }
}

} // namespace gua::sampler

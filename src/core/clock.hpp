// The clock seam: wall time for timestamps, monotonic time for scheduling; simulated in
// demos/tests.
#pragma once

#include "core/time.hpp"

#include <atomic>
#include <cstdint>

namespace gua {

/// Source of time for the sampler. Implementations must be usable from one thread at a time.
class Clock {
  public:
    virtual ~Clock() = default;
    /// Current wall-clock time in UTC microseconds (used for stored timestamps only).
    virtual TimeUs wall_now() = 0;
    /// Current monotonic time in microseconds (used for scheduling and durations).
    virtual std::int64_t mono_now() = 0;
    /// Sleeps until mono_now() >= deadline or `stop` becomes true (checked at least every 100 ms).
    virtual void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) = 0;
};

/// The real clocks: CLOCK_REALTIME and CLOCK_MONOTONIC.
class SystemClock final : public Clock {
  public:
    TimeUs wall_now() override;
    std::int64_t mono_now() override;
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;
};

/// A clock that only moves when slept on: sleep_until jumps straight to the deadline.
class SimulatedClock final : public Clock {
  public:
    /// Starts at wall time `start` with monotonic time 0.
    explicit SimulatedClock(TimeUs start) : m_start(start) {}
    TimeUs wall_now() override { return m_start + m_mono; }
    std::int64_t mono_now() override { return m_mono; }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;
    /// Moves time forward by `us` (e.g. to model work that takes time).
    void advance(DurationUs us) { m_mono += us; }

  private:
    TimeUs m_start;
    std::int64_t m_mono = 0;
};

} // namespace gua

// SPDX-License-Identifier: Apache-2.0
// The clock seam: wall time for timestamps, monotonic time for scheduling; simulated in
// demos/tests, and stepped through a scenario clock file in end-to-end tests of the daemon.
#pragma once

#include "core/time.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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
    /// Current boot time (CLOCK_BOOTTIME, what /proc start times count from) in microseconds, or
    /// nullopt where this clock's time is not the host's (simulated clocks).
    virtual std::optional<std::int64_t> boot_now() { return std::nullopt; }
};

/// The real clocks: CLOCK_REALTIME and CLOCK_MONOTONIC.
class SystemClock final : public Clock {
  public:
    TimeUs wall_now() override;
    std::int64_t mono_now() override;
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;
    std::optional<std::int64_t> boot_now() override;
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

/// Test-only: simulated time shared with the fake NVML library through its clock file (scenario
/// seconds, tests/fake_nvml/README.md). sleep_until jumps to the deadline and writes the matching
/// scenario time into the file before returning, so a 30 s tick costs no real time. While
/// `<file>.hold` holds a scenario time before the deadline, the clock advances to that time,
/// writes it, and waits in real time until the hold is raised or removed (a test can change the
/// world, e.g. real processes, at an exact scenario time). `<file>.wall_step`, read at every
/// wait, holds seconds added to the wall clock only (negative: stepped back), as when NTP or an
/// administrator steps the system clock; monotonic and scenario time go on unchanged.
class ScenarioFileClock final : public Clock {
  public:
    /// Starts at the scenario time read from `path` and at the current wall time; throws Fatal
    /// when the file cannot be read.
    explicit ScenarioFileClock(std::string path);
    TimeUs wall_now() override { return m_wall_start + m_mono + m_wall_step_us; }
    std::int64_t mono_now() override { return m_mono; }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;

  private:
    void move_to(std::int64_t mono);

    std::string m_path;
    double m_start_s = 0;
    TimeUs m_wall_start = 0;
    std::int64_t m_mono = 0;
    DurationUs m_wall_step_us = 0;
};

/// The daemon's clock: a ScenarioFileClock when the test-only variable GUA_TEST_CLOCK_FILE names
/// a clock file, else the SystemClock. Throws Fatal when the named file cannot be read.
std::unique_ptr<Clock> clock_from_environment();

} // namespace gua

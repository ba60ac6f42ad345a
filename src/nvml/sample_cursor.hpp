// Cursors over the driver's sample buffers and their integration over a poll span, following
// nvml-notes §14 ("Rules for the daemon"). Pure logic: no NVML calls, no wall time.
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gua::nvml {

/// One entry of a utilization ring as returned by nvmlDeviceGetSamples.
struct RingSample {
    std::uint64_t timestamp_us = 0; ///< driver timestamp (opaque domain, µs)
    double pct = 0;
};

/// What one poll of a utilization ring produced.
struct RingFold {
    std::vector<telemetry::UtilSample> samples; ///< weighted sub-samples covering the poll span
    int junk = 0;              ///< samples dropped because their value was over 100 %
    bool lost_samples = false; ///< the ring overflowed since the previous poll (coverage < 100 %)
};

/// Cursor of one (device, sampling type) ring: the newest timestamp already consumed.
class UtilCursor {
  public:
    /// True once prime() ran; until then poll() must call prime() with a batch read from 0.
    bool primed() const { return m_primed; }
    /// The lastSeenTimeStamp to pass to the driver.
    std::uint64_t cursor_us() const { return m_cursor_us; }

    /// Startup (rule 2): takes the newest timestamp of `batch` (read with cursor 0) as cursor and
    /// remembers the ring size; the values, which predate the poll span, are discarded.
    void prime(const std::vector<RingSample>& batch);

    /// Forgets everything; the next poll primes again.
    void reset() { *this = UtilCursor{}; }

    /// Folds the driver's reply (the samples after the cursor; empty for NOT_FOUND) into
    /// sub-samples covering `span_us`, the time since the previous poll (rules 3–5, 7). Time the
    /// batch does not cover is idle (0 %), or `snapshot_pct` when that is above 0.
    RingFold fold(std::vector<RingSample> batch, DurationUs span_us,
                  std::optional<double> snapshot_pct);

  private:
    bool m_primed = false;
    std::uint64_t m_cursor_us = 0;
    std::size_t m_ring_size = 0;
    DurationUs m_period_us = k_us_per_second;
    int m_dry_busy_polls = 0;
};

/// One entry of nvmlDeviceGetProcessUtilization.
struct ProcessUtilEntry {
    std::uint32_t pid = 0;
    std::uint64_t timestamp_us = 0;
    unsigned int sm_util_pct = 0;
};

/// Cursor of one device's per-process utilization (rule 8).
class ProcessUtilCursor {
  public:
    /// True once prime() ran.
    bool primed() const { return m_primed; }
    /// The lastSeenTimeStamp to pass to the driver.
    std::uint64_t cursor_us() const { return m_cursor_us; }

    /// Startup: takes the newest plausible timestamp of `entries` (read with cursor 0).
    void prime(const std::vector<ProcessUtilEntry>& entries);

    /// Forgets everything; the next poll primes again.
    void reset() { *this = ProcessUtilCursor{}; }

    /// SM % over the poll for every pid in `live_pids`: the driver's average since the cursor, or
    /// 0 when the driver reported nothing newer for it. Entries for other pids, with util over
    /// 100 or not newer than the cursor are dropped; the first two kinds are counted in `junk`.
    std::unordered_map<std::uint32_t, double> fold(const std::vector<ProcessUtilEntry>& entries,
                                                   const std::vector<std::uint32_t>& live_pids,
                                                   int& junk);

  private:
    bool m_primed = false;
    std::uint64_t m_cursor_us = 0;
};

} // namespace gua::nvml

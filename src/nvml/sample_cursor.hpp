// SPDX-License-Identifier: Apache-2.0
// Cursors over the driver's sample buffers and their integration over a poll span, following
// nvml-notes §14 ("Rules for the daemon"). Pure logic: no NVML calls, no wall time.
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gua::nvml {

/// One entry of a utilization ring as returned by nvmlDeviceGetSamples.
struct RingSample {
    std::uint64_t timestamp_us = 0; ///< driver timestamp (opaque domain, µs)
    double pct = 0;
};

/// What one poll of a utilization ring produced.
struct RingFold {
    /// Weighted sub-samples covering the poll span less `unmeasured_us`, in time order.
    std::vector<telemetry::UtilSample> samples;
    DurationUs unmeasured_us = 0; ///< part of the span the ring can no longer show (or junk)
    int junk = 0;                 ///< samples dropped because their value was over 100 %
    bool lost_samples = false;    ///< the ring overflowed since the previous poll
};

/// Cursor of one (device, sampling type) ring: the newest timestamp already consumed, and what
/// the ring has shown of itself (capacity, period).
class UtilCursor {
  public:
    /// True once prime() ran; until then poll() must call prime() with a batch read from 0.
    bool primed() const { return m_primed; }
    /// The lastSeenTimeStamp to pass to the driver.
    std::uint64_t cursor_us() const { return m_cursor_us; }
    /// The largest number of entries the ring has shown at once (0: none seen yet).
    std::size_t capacity() const { return m_capacity; }
    /// The ring's sample period as measured (1 s, NVML's longest, until two adjacent samples).
    DurationUs period_us() const { return m_period_us; }
    /// True once the period was measured from two adjacent samples.
    bool period_known() const { return m_period_known; }
    /// The longest poll span that cannot lose samples: half the time the ring covers
    /// (capacity × period), at least 1.5 periods (a faster poll finds nothing new), clamped to
    /// [50 ms, 5 s]; 1 s while the capacity is unknown.
    DurationUs affordable_span_us() const;
    /// True when a reply of `reply_count` entries may hold the whole ring and the capacity is
    /// not yet certain: the caller then asks the size of the whole ring (lastSeen 0) for fold().
    bool wants_ring_total(std::size_t reply_count) const {
        return reply_count > 0 && !m_capacity_confirmed;
    }

    /// Startup (rule 2): takes the newest timestamp of `batch` (read with cursor 0) as cursor and
    /// learns the ring's size and period; the values, which predate the poll span, are discarded.
    void prime(const std::vector<RingSample>& batch);

    /// Forgets the cursor (the next poll primes again); keeps what was learnt of the ring.
    void reset();

    /// Folds the driver's reply `batch` (the samples after the cursor; empty for NOT_FOUND; left
    /// filtered and sorted) into `out` for `span_us`, the time since the previous poll; `out`'s
    /// storage is reused. Time between samples that the ring could still hold is idle (0 %);
    /// time before the oldest sample of a reply that filled the ring (`ring_total`: the whole
    /// ring's size, when asked) is unmeasured, as is the span of an empty reply while
    /// `snapshot_pct` says the card is busy. Never fills time with the snapshot.
    void fold(std::vector<RingSample>& batch, DurationUs span_us,
              std::optional<double> snapshot_pct, RingFold& out,
              std::optional<std::size_t> ring_total = std::nullopt);

    /// Records a poll whose ring could not be read: its span is unmeasured, and samples read
    /// later for it are not credited to the next poll's span.
    void skip(DurationUs span_us) {
        m_accounted_us += span_us;
        m_since_cursor_us += span_us;
    }
    /// True once the ring has shown time without samples that it could have held: it stops
    /// writing while the card is idle, and time after its newest sample may be idle.
    bool dry() const { return m_dry; }

  private:
    void learn_period(const std::vector<RingSample>& sorted);
    /// Keeps the entries of `batch` after the cursor, sorted and unique, and learns the ring's
    /// size from it (and from `ring_total`); returns how many entries the reply held.
    std::size_t take_reply(std::vector<RingSample>& batch, std::optional<std::size_t> ring_total);
    /// A reply with nothing new: idle, or unmeasured while the snapshot says busy.
    void fold_empty(DurationUs span_us, std::optional<double> snapshot_pct, RingFold& out);
    /// True when `batch` (sorted, after the cursor, `since_cursor` µs from it to its oldest)
    /// holds time without samples that the ring could have held.
    bool shows_dry(const std::vector<RingSample>& batch, DurationUs since_cursor) const;
    /// Lays the new entries of `batch` (sorted, after the cursor) and the idle or lost time
    /// around them out over the time since the cursor; `count`: the reply's entries.
    void fold_samples(const std::vector<RingSample>& batch, DurationUs span_us, std::size_t count,
                      std::optional<std::size_t> ring_total, RingFold& out);

    bool m_primed = false;
    std::uint64_t m_cursor_us = 0;
    std::size_t m_capacity = 0;
    bool m_capacity_confirmed = false;
    std::optional<std::size_t> m_last_total;
    DurationUs m_period_us = k_us_per_second;
    bool m_period_known = false;
    /// Time after the cursor that earlier polls already accounted for (idle, unmeasured, skipped).
    DurationUs m_accounted_us = 0;
    /// The time from the cursor's sample to the previous poll, as estimated from the poll spans
    /// (negative when a reply reached past the poll's instant: the ring was read late). Kept
    /// signed from poll to poll, so that reads late by varying delays never add up to time
    /// after the newest sample that is not there.
    DurationUs m_since_cursor_us = 0;
    /// m_since_cursor_us at the last poll that read the ring (a skipped poll did not).
    DurationUs m_since_cursor_at_read_us = 0;
    bool m_dry = false;
    int m_dry_busy_polls = 0;
    std::vector<DurationUs> m_gaps; ///< scratch storage of learn_period()
};

/// One entry of nvmlDeviceGetProcessUtilization.
struct ProcessUtilEntry {
    std::uint32_t pid = 0;
    std::uint64_t timestamp_us = 0;
    unsigned int sm_util_pct = 0;
};

/// SM % per pid over one poll: a flat map sorted by pid (no allocation per pid).
class PidUtils {
  public:
    /// Starts again with zero for each of `pids` (duplicates collapse), reusing the storage.
    void assign(const std::vector<std::uint32_t>& pids);
    std::size_t size() const { return m_items.size(); }
    /// The SM % of `pid`; throws std::out_of_range for a pid that is not live.
    double at(std::uint32_t pid) const;
    /// The SM % of `pid` the first time it is taken, 0 after that (a pid listed several times
    /// gets its share once).
    double take(std::uint32_t pid);
    /// Sets `pid`'s SM % from an entry at `timestamp_us` unless a newer entry set it; false when
    /// `pid` is not live.
    bool offer(std::uint32_t pid, std::uint64_t timestamp_us, double pct);

  private:
    struct Item {
        std::uint32_t pid = 0;
        bool taken = false;
        std::uint64_t newest_us = 0;
        double pct = 0;
    };
    const Item* find(std::uint32_t pid) const;
    Item* find(std::uint32_t pid) {
        return const_cast<Item*>(static_cast<const PidUtils*>(this)->find(pid));
    }
    std::vector<Item> m_items;
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

    /// Sets `out` to the SM % over the poll for every pid in `live_pids`: the driver's average
    /// since the cursor, or 0 when the driver reported nothing newer for it. Entries with util
    /// over 100 (driver junk) are counted in `junk`; entries for pids not in `live_pids` (gua's
    /// own choice: e.g. a process that exited before the poll read its list) in `unlisted`;
    /// both are dropped, as are entries not newer than the cursor.
    void fold(const std::vector<ProcessUtilEntry>& entries,
              const std::vector<std::uint32_t>& live_pids, int& junk, int& unlisted, PidUtils& out);

  private:
    bool m_primed = false;
    std::uint64_t m_cursor_us = 0;
};

} // namespace gua::nvml

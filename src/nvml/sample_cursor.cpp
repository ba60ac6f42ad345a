// SPDX-License-Identifier: Apache-2.0
// Integration of driver sample rings over poll spans (nvml-notes §14).
#include "nvml/sample_cursor.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace gua::nvml {
namespace {

/// Polls in a row with an empty ring while the snapshot says busy before the cursor is reset.
constexpr int k_dry_busy_polls_before_reset = 3;
/// Bounds of the poll span a ring affords (the daemon never polls less often than every 5 s).
constexpr DurationUs k_min_span_us = 50 * k_us_per_ms;
constexpr DurationUs k_max_span_us = 5 * k_us_per_second;
/// Timestamps within p / k_grid_tolerance of the ring's period grid are on it (rounding, jitter).
constexpr DurationUs k_grid_tolerance = 32;
/// Poll span while a ring has shown nothing of its size.
constexpr DurationUs k_unknown_capacity_span_us = k_us_per_second;

bool by_time(const RingSample& a, const RingSample& b) {
    return a.timestamp_us < b.timestamp_us;
}

/// Appends time segments in order to a RingFold, dropping the first `trim` µs (the span of
/// earlier polls whose samples arrived only now) and merging adjacent idle gaps.
class Timeline {
  public:
    Timeline(RingFold& out, DurationUs trim) : m_out(out), m_trim(trim) {}
    void add(double pct, DurationUs us, bool unmeasured, bool gap = false) {
        const DurationUs cut = std::min(m_trim, us);
        m_trim -= cut;
        us -= cut;
        if (us <= 0) {
            return;
        }
        if (unmeasured) {
            m_out.unmeasured_us += us;
        } else if (gap && m_last_gap) {
            m_out.samples.back().weight_us += us;
        } else {
            m_out.samples.push_back({pct, us});
        }
        m_last_gap = gap && !unmeasured;
    }

  private:
    RingFold& m_out;
    DurationUs m_trim;
    bool m_last_gap = false;
};

} // namespace

DurationUs UtilCursor::affordable_span_us() const {
    if (m_capacity == 0) {
        return k_unknown_capacity_span_us;
    }
    // A ring shows few entries while it fills: polling more often than every 1.5 periods would
    // only fetch empty replies, whose spans are unmeasured while the card is busy.
    const DurationUs covered = static_cast<DurationUs>(m_capacity) * m_period_us;
    return std::clamp<DurationUs>(std::max(covered / 2, m_period_us * 3 / 2), k_min_span_us,
                                  k_max_span_us);
}

void UtilCursor::learn_period(const std::vector<RingSample>& sorted) {
    // Adjacent samples are one period apart; a dry ring also has longer gaps (idle time), so
    // the period is the median of the gaps near the smallest one, and the smallest over time.
    if (sorted.size() < 2) {
        return;
    }
    m_gaps.clear();
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        m_gaps.push_back(
            static_cast<DurationUs>(sorted[i].timestamp_us - sorted[i - 1].timestamp_us));
    }
    const DurationUs smallest =
        std::max<DurationUs>(*std::min_element(m_gaps.begin(), m_gaps.end()), 1);
    std::erase_if(m_gaps, [smallest](DurationUs g) { return 2 * g > 3 * smallest; });
    auto middle = m_gaps.begin() + static_cast<std::ptrdiff_t>(m_gaps.size() / 2);
    std::nth_element(m_gaps.begin(), middle, m_gaps.end());
    const DurationUs period = std::min(*middle, k_us_per_second);
    m_period_us = m_period_known ? std::min(m_period_us, period) : period;
    m_period_known = true;
}

void UtilCursor::prime(const std::vector<RingSample>& batch) {
    m_primed = true;
    m_dry_busy_polls = 0;
    m_accounted_us = 0;
    m_since_cursor_us = 0; // the read is taken for the newest sample's time
    m_since_cursor_at_read_us = 0;
    std::size_t count = 0;
    for (const RingSample& s : batch) {
        if (s.timestamp_us != 0) {
            m_cursor_us = std::max(m_cursor_us, s.timestamp_us);
            ++count;
        }
    }
    m_capacity = std::max(m_capacity, count);
    std::vector<RingSample> sorted;
    std::copy_if(batch.begin(), batch.end(), std::back_inserter(sorted),
                 [](const RingSample& s) { return s.timestamp_us != 0; });
    std::sort(sorted.begin(), sorted.end(), by_time);
    learn_period(sorted);
}

void UtilCursor::reset() {
    m_primed = false;
    m_cursor_us = 0;
    m_accounted_us = 0;
    m_since_cursor_us = 0;
    m_since_cursor_at_read_us = 0;
    m_dry_busy_polls = 0;
    m_last_total.reset();
}

std::size_t UtilCursor::take_reply(std::vector<RingSample>& batch,
                                   std::optional<std::size_t> ring_total) {
    const auto count = static_cast<std::size_t>(std::count_if(
        batch.begin(), batch.end(), [](const RingSample& s) { return s.timestamp_us != 0; }));
    std::erase_if(batch, [this](const RingSample& s) {
        return s.timestamp_us == 0 || s.timestamp_us <= m_cursor_us;
    });
    std::sort(batch.begin(), batch.end(), by_time);
    batch.erase(std::unique(batch.begin(), batch.end(),
                            [](const RingSample& a, const RingSample& b) {
                                return a.timestamp_us == b.timestamp_us;
                            }),
                batch.end());
    if (ring_total) {
        // New entries arrived but the ring did not grow: it is full, its size is known.
        m_capacity_confirmed = m_capacity_confirmed ||
                               (!batch.empty() && m_last_total && *m_last_total == *ring_total);
        m_last_total = ring_total;
        m_capacity = std::max(m_capacity, *ring_total);
    }
    m_capacity = std::max(m_capacity, count);
    return count;
}

void UtilCursor::fold_empty(DurationUs span_us, std::optional<double> snapshot_pct, RingFold& out) {
    m_accounted_us += span_us;
    m_since_cursor_us += span_us;
    m_since_cursor_at_read_us = m_since_cursor_us;
    if (snapshot_pct.value_or(0.0) > 0) {
        // The snapshot says busy but the ring has nothing new: not "idle". The span is
        // unmeasured; samples that show up later for it are dropped by the next fold.
        out.unmeasured_us = span_us;
        if (++m_dry_busy_polls >= k_dry_busy_polls_before_reset) {
            reset(); // the timestamps may have stepped back: prime again
        }
        return;
    }
    m_dry_busy_polls = 0;
    out.samples.push_back({0.0, span_us});
}

void UtilCursor::fold(std::vector<RingSample>& batch, DurationUs span_us,
                      std::optional<double> snapshot_pct, RingFold& out,
                      std::optional<std::size_t> ring_total) {
    out.samples.clear();
    out.unmeasured_us = 0;
    out.junk = 0;
    out.lost_samples = false;
    span_us = std::max<DurationUs>(span_us, 1);
    const std::size_t count = take_reply(batch, ring_total);
    if (batch.empty()) {
        fold_empty(span_us, snapshot_pct, out);
        return;
    }
    m_dry_busy_polls = 0;
    learn_period(batch);
    fold_samples(batch, span_us, count, ring_total, out);
}

bool UtilCursor::shows_dry(const std::vector<RingSample>& batch, DurationUs since_cursor) const {
    const DurationUs p = m_period_us;
    if (2 * since_cursor > 3 * p) {
        return true;
    }
    for (std::size_t i = 1; i < batch.size(); ++i) {
        const auto gap = static_cast<DurationUs>(batch[i].timestamp_us - batch[i - 1].timestamp_us);
        if (2 * gap > 3 * p) {
            return true;
        }
    }
    return false;
}

void UtilCursor::fold_samples(const std::vector<RingSample>& batch, DurationUs span_us,
                              std::size_t count, std::optional<std::size_t> ring_total,
                              RingFold& out) {
    const DurationUs p = m_period_us;
    // Adjacent samples are at most 1.5 periods apart (timestamps jitter); a sample stands for
    // the time since the previous one, at most one period.
    const auto weight_of = [p](DurationUs gap) { return 2 * gap <= 3 * p ? gap : p; };
    const std::uint64_t oldest = batch.front().timestamp_us;
    const bool anchored = m_cursor_us != 0;
    const auto since_cursor = static_cast<DurationUs>(oldest - m_cursor_us);
    if (anchored) {
        // The oldest new sample was not written yet at the last read: that read came at most
        // its distance after the cursor. Time estimated beyond that was not there.
        m_since_cursor_us -= std::max<DurationUs>(m_since_cursor_at_read_us - since_cursor, 0);
    }
    // Time from the cursor to now, signed; the first `trim` µs of it earlier polls accounted for
    // (idle, unmeasured or skipped spans). The timeline is anchored at now.
    const DurationUs trim = m_accounted_us;
    const DurationUs total = m_since_cursor_us + span_us;
    const DurationUs first_weight = anchored ? weight_of(since_cursor) : p;
    // The time the reply shows: from its oldest sample's period to its newest sample.
    const DurationUs window =
        static_cast<DurationUs>(batch.back().timestamp_us - oldest) + first_weight;
    // The reply filled the ring when it holds as many entries as the ring ever showed and the
    // ring holds nothing older: what came between the cursor and its oldest entry is gone.
    const bool full = count >= m_capacity && (!ring_total || count >= *ring_total);
    // Without a cursor (the ring was empty at every earlier poll) the time before this span
    // is known empty; a full reply that does not reach back to the span's start lost samples.
    out.lost_samples = full && (anchored ? since_cursor > 2 * p : window + 2 * p < span_us);
    // Before the oldest sample: the time since the cursor the ring shows nothing for, all of it
    // even when the reply reaches past the poll's instant (so that the sums over polls stay the
    // ring's); but a gap further ahead of the poll spans than a read can be late is a step of
    // the driver's clock, not time: only what the span leaves. Without a cursor, the same.
    const DurationUs room = std::max<DurationUs>(total - window, 0);
    const DurationUs late = std::max(2 * span_us, k_us_per_second);
    const DurationUs empty_before = since_cursor - first_weight;
    const bool stepped = anchored && empty_before > room + late;
    const DurationUs lead = anchored && !stepped ? std::max<DurationUs>(empty_before, 0) : room;
    m_dry = m_dry || (anchored && !stepped && !out.lost_samples && shows_dry(batch, since_cursor));
    // After the newest sample: on a ring that stops writing while idle (or when several periods
    // are missing), whole periods the ring could hold are idle; the period still running at
    // the poll is left to the next poll, whose first sample may stand for it. A ring that keeps
    // writing has a sample for every period: its next reply covers that time. A reply reaching
    // further past the poll's instant than a read can be late means the clock stepped: the
    // newest sample is taken for the poll's instant, as at the start.
    const DurationUs behind = total - lead - window;
    const DurationUs after = behind < -late ? 0 : behind;
    const bool idle_after = m_dry || after >= 3 * p;
    const DurationUs idle_room = idle_after ? std::max<DurationUs>(after, 0) : 0;
    const DurationUs tail = std::min(idle_room, (idle_room + p / k_grid_tolerance) / p * p);

    Timeline timeline(out, trim);
    timeline.add(0.0, lead, out.lost_samples, true);
    std::uint64_t previous = oldest;
    for (const RingSample& s : batch) {
        DurationUs weight = first_weight;
        if (s.timestamp_us != oldest) {
            const auto gap = static_cast<DurationUs>(s.timestamp_us - previous);
            weight = weight_of(gap);
            timeline.add(0.0, gap - weight, false, true); // the ring could hold it: idle
        }
        previous = s.timestamp_us;
        const bool junk = s.pct > 100.0 || s.pct < 0.0;
        out.junk += junk ? 1 : 0;
        timeline.add(s.pct, weight, junk);
    }
    timeline.add(0.0, tail, false, true);
    m_cursor_us = batch.back().timestamp_us;
    m_accounted_us = tail;
    m_since_cursor_us = after;
    m_since_cursor_at_read_us = after;
}

void ProcessUtilCursor::prime(const std::vector<ProcessUtilEntry>& entries) {
    m_primed = true;
    for (const ProcessUtilEntry& e : entries) {
        if (e.pid != 0 && e.sm_util_pct <= 100) {
            m_cursor_us = std::max(m_cursor_us, e.timestamp_us);
        }
    }
}

void PidUtils::assign(const std::vector<std::uint32_t>& pids) {
    m_items.clear();
    for (const std::uint32_t pid : pids) {
        m_items.push_back({pid, false, 0, 0.0});
    }
    std::sort(m_items.begin(), m_items.end(),
              [](const Item& a, const Item& b) { return a.pid < b.pid; });
    m_items.erase(std::unique(m_items.begin(), m_items.end(),
                              [](const Item& a, const Item& b) { return a.pid == b.pid; }),
                  m_items.end());
}

const PidUtils::Item* PidUtils::find(std::uint32_t pid) const {
    const auto it =
        std::lower_bound(m_items.begin(), m_items.end(), pid,
                         [](const Item& item, std::uint32_t p) { return item.pid < p; });
    return it != m_items.end() && it->pid == pid ? &*it : nullptr;
}

double PidUtils::at(std::uint32_t pid) const {
    const Item* item = find(pid);
    if (item == nullptr) {
        throw std::out_of_range("pid " + std::to_string(pid) + " is not live");
    }
    return item->pct;
}

double PidUtils::take(std::uint32_t pid) {
    Item* item = find(pid);
    if (item == nullptr || item->taken) {
        return 0.0;
    }
    item->taken = true;
    return item->pct;
}

bool PidUtils::offer(std::uint32_t pid, std::uint64_t timestamp_us, double pct) {
    Item* item = find(pid);
    if (item == nullptr) {
        return false;
    }
    if (timestamp_us >= item->newest_us) {
        item->newest_us = timestamp_us;
        item->pct = pct;
    }
    return true;
}

void ProcessUtilCursor::fold(const std::vector<ProcessUtilEntry>& entries,
                             const std::vector<std::uint32_t>& live_pids, int& junk, int& unlisted,
                             PidUtils& out) {
    out.assign(live_pids);
    std::uint64_t cursor = m_cursor_us;
    for (const ProcessUtilEntry& e : entries) {
        if (e.timestamp_us == 0 || e.timestamp_us <= m_cursor_us) {
            continue;
        }
        if (e.sm_util_pct > 100) {
            ++junk;
            continue;
        }
        if (!out.offer(e.pid, e.timestamp_us, e.sm_util_pct)) {
            ++unlisted;
            continue;
        }
        cursor = std::max(cursor, e.timestamp_us);
    }
    m_cursor_us = cursor;
}

} // namespace gua::nvml

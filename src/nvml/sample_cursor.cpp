// Integration of driver sample rings over poll spans (nvml-notes §14).
#include "nvml/sample_cursor.hpp"

#include <algorithm>

namespace gua::nvml {
namespace {

/// Polls in a row with an empty ring while the snapshot says busy before the cursor is reset.
constexpr int k_dry_busy_polls_before_reset = 3;

DurationUs median_gap(const std::vector<RingSample>& sorted, DurationUs fallback) {
    if (sorted.size() < 2) {
        return fallback;
    }
    std::vector<DurationUs> gaps;
    gaps.reserve(sorted.size() - 1);
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        gaps.push_back(
            static_cast<DurationUs>(sorted[i].timestamp_us - sorted[i - 1].timestamp_us));
    }
    auto middle = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
    std::nth_element(gaps.begin(), middle, gaps.end());
    return std::max<DurationUs>(*middle, 1);
}

} // namespace

void UtilCursor::prime(const std::vector<RingSample>& batch) {
    m_primed = true;
    m_dry_busy_polls = 0;
    m_ring_size = 0;
    for (const RingSample& s : batch) {
        if (s.timestamp_us != 0) {
            m_cursor_us = std::max(m_cursor_us, s.timestamp_us);
            ++m_ring_size;
        }
    }
}

RingFold UtilCursor::fold(std::vector<RingSample> batch, DurationUs span_us,
                          std::optional<double> snapshot_pct) {
    RingFold out;
    const double idle_pct = snapshot_pct.value_or(0.0) > 0 ? *snapshot_pct : 0.0;
    std::erase_if(batch, [this](const RingSample& s) {
        return s.timestamp_us == 0 || s.timestamp_us <= m_cursor_us;
    });
    std::sort(batch.begin(), batch.end(), [](const RingSample& a, const RingSample& b) {
        return a.timestamp_us < b.timestamp_us;
    });
    batch.erase(std::unique(batch.begin(), batch.end(),
                            [](const RingSample& a, const RingSample& b) {
                                return a.timestamp_us == b.timestamp_us;
                            }),
                batch.end());
    if (batch.empty()) {
        m_dry_busy_polls = idle_pct > 0 ? m_dry_busy_polls + 1 : 0;
        if (m_dry_busy_polls >= k_dry_busy_polls_before_reset) {
            reset();
        }
        out.samples.push_back({idle_pct, std::max<DurationUs>(span_us, 1)});
        return out;
    }
    m_dry_busy_polls = 0;
    const DurationUs period_us = median_gap(batch, m_period_us);
    m_period_us = period_us;
    const std::uint64_t oldest = batch.front().timestamp_us;
    out.lost_samples = m_ring_size > 0 && batch.size() >= m_ring_size && m_cursor_us != 0 &&
                       oldest - m_cursor_us > static_cast<std::uint64_t>(2 * period_us);
    std::uint64_t previous =
        m_cursor_us != 0 ? m_cursor_us : oldest - std::min<std::uint64_t>(oldest, period_us);
    DurationUs covered_us = 0;
    for (const RingSample& s : batch) {
        const DurationUs weight =
            std::min<DurationUs>(static_cast<DurationUs>(s.timestamp_us - previous), period_us);
        previous = s.timestamp_us;
        covered_us += weight;
        if (s.pct > 100.0 || s.pct < 0.0) {
            ++out.junk;
            continue;
        }
        out.samples.push_back({s.pct, std::max<DurationUs>(weight, 1)});
    }
    m_cursor_us = batch.back().timestamp_us;
    const DurationUs uncovered_us = span_us - covered_us;
    if (!out.lost_samples && uncovered_us > period_us) {
        out.samples.push_back({idle_pct, uncovered_us});
    }
    return out;
}

void ProcessUtilCursor::prime(const std::vector<ProcessUtilEntry>& entries) {
    m_primed = true;
    for (const ProcessUtilEntry& e : entries) {
        if (e.pid != 0 && e.sm_util_pct <= 100) {
            m_cursor_us = std::max(m_cursor_us, e.timestamp_us);
        }
    }
}

std::unordered_map<std::uint32_t, double>
ProcessUtilCursor::fold(const std::vector<ProcessUtilEntry>& entries,
                        const std::vector<std::uint32_t>& live_pids, int& junk) {
    std::unordered_map<std::uint32_t, double> out;
    std::unordered_map<std::uint32_t, std::uint64_t> newest;
    for (const std::uint32_t pid : live_pids) {
        out[pid] = 0.0;
    }
    std::uint64_t cursor = m_cursor_us;
    for (const ProcessUtilEntry& e : entries) {
        if (e.timestamp_us == 0 || e.timestamp_us <= m_cursor_us) {
            continue;
        }
        if (!out.contains(e.pid) || e.sm_util_pct > 100) {
            ++junk;
            continue;
        }
        if (e.timestamp_us >= newest[e.pid]) {
            newest[e.pid] = e.timestamp_us;
            out[e.pid] = e.sm_util_pct;
        }
        cursor = std::max(cursor, e.timestamp_us);
    }
    m_cursor_us = cursor;
    return out;
}

} // namespace gua::nvml

// Integration of driver sample rings over poll spans (nvml-notes §14).
#include "nvml/sample_cursor.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

void UtilCursor::fold(std::vector<RingSample>& batch, DurationUs span_us,
                      std::optional<double> snapshot_pct, RingFold& out) {
    out.samples.clear();
    out.junk = 0;
    out.lost_samples = false;
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
        return;
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
                             const std::vector<std::uint32_t>& live_pids, int& junk,
                             PidUtils& out) {
    out.assign(live_pids);
    std::uint64_t cursor = m_cursor_us;
    for (const ProcessUtilEntry& e : entries) {
        if (e.timestamp_us == 0 || e.timestamp_us <= m_cursor_us) {
            continue;
        }
        if (e.sm_util_pct > 100 || !out.offer(e.pid, e.timestamp_us, e.sm_util_pct)) {
            ++junk;
            continue;
        }
        cursor = std::max(cursor, e.timestamp_us);
    }
    m_cursor_us = cursor;
}

} // namespace gua::nvml

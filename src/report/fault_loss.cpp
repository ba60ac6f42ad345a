// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults: which stored faults open a span, and the ticks that decide its end.
#include "report/fault_loss.hpp"

#include "store/faults.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace gua::report {

namespace {

/// A fault that strands its card: the card's gpu row id and the fault's time.
struct Stranding {
    std::uint32_t gpu = 0;
    TimeUs at = 0;
};

std::vector<Stranding> strandings(store::Database& db, const std::vector<store::GpuRow>& gpus,
                                  TimeUs from, TimeUs to) {
    std::map<std::string, std::uint32_t> by_uuid;
    for (const store::GpuRow& g : gpus) {
        by_uuid[g.uuid] = static_cast<std::uint32_t>(g.id);
    }
    std::vector<Stranding> out;
    for (const telemetry::FaultEvent& e : store::read_faults(db, from - k_fault_lookback_us, to)) {
        const auto g = by_uuid.find(e.uuid);
        if (g != by_uuid.end() && audit::strands_card(e.xid)) {
            out.push_back(Stranding{g->second, e.at_us});
        }
    }
    return out;
}

/// The card-ticks that decide where the spans of `faults` (sorted by time) end, scanned in
/// stretches: from an hour before a fault (so that the tick it came in is among them) for two
/// hours, then twice as long each time while a span is still open, and on from an hour before
/// the next fault once all are closed. A span usually closes within minutes, so a fault early in
/// a long window costs a few hours of raw card-ticks, not the rest of the window.
class SpanScan {
  public:
    SpanScan(store::Reader& reader, const audit::Thresholds& thresholds,
             const std::vector<Stranding>& faults, TimeUs to)
        : m_reader(reader), m_thresholds(thresholds), m_faults(faults), m_to(to) {
        for (const Stranding& f : faults) {
            m_first_at.emplace(f.gpu, f.at); // sorted: the first is the card's earliest
        }
    }

    audit::FaultSpans run() {
        TimeUs from = m_faults.front().at - k_us_per_hour;
        DurationUs width = 2 * k_us_per_hour;
        while (from < m_to) {
            const TimeUs until = width >= m_to - from ? m_to : from + width;
            scan(from, until);
            if (until >= m_to) {
                break;
            }
            if (open(until)) {
                width = std::min<DurationUs>(width, m_to - from) * 2;
                from = until;
                continue;
            }
            const std::optional<TimeUs> next = next_fault(until);
            if (!next) {
                break;
            }
            from = std::max(until, *next - k_us_per_hour);
            width = 2 * k_us_per_hour;
        }
        audit::FaultSpans spans;
        for (const Stranding& f : m_faults) {
            const audit::FaultSpan s = audit::fault_span_sorted(f.at, m_ticks[f.gpu]).span;
            spans.add(f.gpu, s.from, s.to);
        }
        return spans;
    }

  private:
    void scan(TimeUs from, TimeUs until) {
        m_reader.scan(from, until, [&](const audit::CardTick& tick) {
            const auto f = m_first_at.find(tick.gpu);
            if (f != m_first_at.end() && tick.t0 + tick.duration_us > f->second) {
                m_ticks[tick.gpu].push_back(audit::tick_state(tick, m_thresholds));
            }
        });
        for (auto& [gpu, ticks] : m_ticks) {
            std::stable_sort(ticks.begin(), ticks.end(),
                             [](const auto& a, const auto& b) { return a.t0 < b.t0; });
        }
    }
    /// True when a fault before `until` has a span that ticks after `until` could extend.
    bool open(TimeUs until) {
        return std::any_of(m_faults.begin(), m_faults.end(), [&](const Stranding& f) {
            return f.at < until && !audit::fault_span_sorted(f.at, m_ticks[f.gpu]).closed;
        });
    }
    /// The first fault at or after `until`.
    std::optional<TimeUs> next_fault(TimeUs until) const {
        const auto it = std::find_if(m_faults.begin(), m_faults.end(),
                                     [&](const Stranding& f) { return f.at >= until; });
        return it == m_faults.end() ? std::nullopt : std::optional(it->at);
    }

    store::Reader& m_reader;
    const audit::Thresholds& m_thresholds;
    const std::vector<Stranding>& m_faults;
    TimeUs m_to;
    std::map<std::uint32_t, TimeUs> m_first_at;
    std::map<std::uint32_t, std::vector<audit::TickState>> m_ticks;
};

} // namespace

audit::FaultSpans fault_loss_spans(store::Database& db, store::Reader& reader,
                                   const std::vector<store::GpuRow>& gpus,
                                   const audit::Thresholds& thresholds, TimeUs from, TimeUs to) {
    std::vector<Stranding> faults = strandings(db, gpus, from, to);
    if (faults.empty()) {
        return {};
    }
    std::stable_sort(faults.begin(), faults.end(),
                     [](const Stranding& a, const Stranding& b) { return a.at < b.at; });
    return SpanScan(reader, thresholds, faults, to).run();
}

} // namespace gua::report

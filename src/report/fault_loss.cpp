// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults: which stored faults open a span, and the ticks that decide its end.
#include "report/fault_loss.hpp"

#include "store/faults.hpp"

#include <algorithm>
#include <map>
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

} // namespace

audit::FaultSpans fault_loss_spans(store::Database& db, store::Reader& reader,
                                   const std::vector<store::GpuRow>& gpus,
                                   const audit::Thresholds& thresholds, TimeUs from, TimeUs to) {
    audit::FaultSpans spans;
    const std::vector<Stranding> faults = strandings(db, gpus, from, to);
    if (faults.empty()) {
        return spans;
    }
    std::map<std::uint32_t, TimeUs> first_at; // per card: its earliest fault
    for (const Stranding& f : faults) {
        const auto [it, added] = first_at.emplace(f.gpu, f.at);
        it->second = std::min(it->second, f.at);
    }
    const TimeUs scan_from = std::min_element(faults.begin(), faults.end(), [](auto& a, auto& b) {
                                 return a.at < b.at;
                             })->at;
    std::map<std::uint32_t, std::vector<audit::TickState>> ticks;
    // From an hour earlier, so that the tick a fault came in is among them.
    reader.scan(scan_from - k_us_per_hour, to, [&](const audit::CardTick& tick) {
        const auto f = first_at.find(tick.gpu);
        if (f != first_at.end() && tick.t0 + tick.duration_us > f->second) {
            ticks[tick.gpu].push_back(audit::tick_state(tick, thresholds));
        }
    });
    for (const Stranding& f : faults) {
        const audit::FaultSpan s = audit::fault_span(f.at, ticks[f.gpu]);
        spans.add(f.gpu, s.from, s.to);
    }
    return spans;
}

} // namespace gua::report

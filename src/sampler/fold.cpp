// Folding polls into card-ticks: time-weighted utilization, bucket times, merged process lists.
#include "sampler/fold.hpp"

#include "audit/card_tick.hpp"

#include <algorithm>
#include <cmath>

namespace gua::sampler {

TickBuilder::TickBuilder(double active_threshold_pct, identity::Resolver& resolver)
    : m_threshold(active_threshold_pct), m_resolver(resolver) {}

namespace {

bool key_less(const telemetry::ProcessTick& a, std::uint32_t pid, telemetry::ProcessType type) {
    return a.pid != pid ? a.pid < pid : static_cast<int>(a.type) < static_cast<int>(type);
}

} // namespace

void TickBuilder::CardAcc::reset() {
    telemetry::DeviceInfo device = std::move(record.device);
    record = telemetry::CardTickRecord{};
    record.device = std::move(device);
    span = 0;
    measured = 0;
    util_weighted = 0;
    active = 0;
    buckets = {};
    lost = false;
    present = false;
    order.clear();
    live = 0;
}

std::vector<std::uint32_t>::iterator TickBuilder::CardAcc::position(std::uint32_t pid,
                                                                    telemetry::ProcessType type) {
    return std::lower_bound(order.begin(), order.end(), 0U, [&](std::uint32_t i, auto) {
        return key_less(processes[i].tick, pid, type);
    });
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find(std::uint32_t pid, telemetry::ProcessType type) {
    const auto it = position(pid, type);
    if (it != order.end() && processes[*it].tick.pid == pid && processes[*it].tick.type == type) {
        return &processes[*it];
    }
    return nullptr;
}

TickBuilder::ProcAcc& TickBuilder::CardAcc::insert(std::uint32_t pid, telemetry::ProcessType type) {
    if (live == processes.size()) {
        processes.emplace_back();
    }
    ProcAcc& acc = processes[live];
    acc.tick.pid = pid;
    acc.tick.type = type;
    acc.tick.start_ticks.reset();
    acc.tick.mem_used_mib.reset();
    acc.tick.sm_util_pct.reset();
    acc.sm_weighted = 0;
    acc.sm_span = 0;
    order.insert(position(pid, type), static_cast<std::uint32_t>(live));
    ++live;
    return acc;
}

void TickBuilder::start(TimeUs t0) {
    m_t0 = t0;
    m_span = 0;
    std::erase_if(m_cards, [](const auto& item) { return !item.second.present; });
    for (auto& [uuid, card] : m_cards) {
        card.reset();
    }
}

void TickBuilder::add_poll(const std::vector<telemetry::DevicePoll>& polls, DurationUs span_us,
                           const std::unordered_map<std::string, telemetry::DeviceInfo>& devices) {
    m_span += span_us;
    for (const telemetry::DevicePoll& poll : polls) {
        CardAcc& card = m_cards[poll.uuid];
        card.present = true;
        if (auto it = devices.find(poll.uuid); it != devices.end()) {
            card.record.device = it->second;
        } else {
            card.record.device.uuid = poll.uuid;
        }
        card.span += span_us;
        if (poll.lost) {
            card.lost = true;
            continue;
        }
        telemetry::CardTickRecord& r = card.record;
        r.read_errors += poll.read_errors;
        double weight_total = 0;
        for (const telemetry::UtilSample& s : poll.util) {
            weight_total += static_cast<double>(std::max<DurationUs>(s.weight_us, 0));
        }
        if (poll.util_source != telemetry::UtilSource::none && weight_total > 0) {
            r.util_source = std::max(r.util_source, poll.util_source);
            const double scale = static_cast<double>(span_us) / weight_total;
            for (const telemetry::UtilSample& s : poll.util) {
                const double us = static_cast<double>(std::max<DurationUs>(s.weight_us, 0)) * scale;
                card.util_weighted += s.pct * us;
                card.buckets[static_cast<std::size_t>(audit::bucket_of(s.pct))] += us;
                if (s.pct >= m_threshold) {
                    card.active += us;
                }
            }
            r.util_samples += static_cast<std::uint32_t>(poll.util.size());
            card.measured += span_us;
        }
        // Device readings: the latest successful reading of the tick wins.
        if (poll.mem_util_pct) {
            r.mem_util_pct = poll.mem_util_pct;
        }
        if (poll.mem_used_mib) {
            r.mem_used_mib = poll.mem_used_mib;
        }
        if (poll.power_mw) {
            r.power_mw = poll.power_mw;
        }
        if (poll.temperature_c) {
            r.temperature_c = poll.temperature_c;
        }
        if (poll.sm_clock_mhz) {
            r.sm_clock_mhz = poll.sm_clock_mhz;
        }
        if (poll.clock_event_reasons) {
            r.clock_event_reasons = r.clock_event_reasons.value_or(0) | *poll.clock_event_reasons;
        }
        for (const telemetry::ProcessReading& p : poll.processes) {
            ProcAcc* found = card.find(p.pid, p.type);
            if (found == nullptr) {
                found = &card.insert(p.pid, p.type);
                if (p.identity) {
                    found->tick.identity = *p.identity;
                } else {
                    const identity::ProcessFacts& facts = m_resolver.resolve(p.pid);
                    found->tick.identity = facts.identity;
                    found->tick.start_ticks = facts.start_ticks;
                }
            }
            ProcAcc& acc = *found;
            if (p.mem_used_mib) {
                acc.tick.mem_used_mib =
                    std::max(acc.tick.mem_used_mib.value_or(0), *p.mem_used_mib);
            }
            if (p.sm_util_pct) {
                acc.sm_weighted += *p.sm_util_pct * static_cast<double>(span_us);
                acc.sm_span += span_us;
            }
        }
    }
}

void TickBuilder::finish(std::uint64_t seq, telemetry::Tick& tick) {
    tick.seq = seq;
    tick.t0 = m_t0;
    tick.duration_us = m_span;
    tick.lost_uuids.clear();
    std::size_t n = 0;
    for (auto& [uuid, card] : m_cards) {
        if (!card.present) {
            continue;
        }
        if (card.lost) {
            tick.lost_uuids.push_back(uuid);
            continue;
        }
        telemetry::CardTickRecord& r = card.record;
        if (card.measured > 0) {
            // Polls without a measurement are extrapolated from the measured ones.
            const double scale = static_cast<double>(m_span) / static_cast<double>(card.measured);
            r.util_pct = card.util_weighted / static_cast<double>(card.measured);
            r.active_us = std::llround(card.active * scale);
            DurationUs assigned = 0;
            for (std::size_t b = 0; b < 4; ++b) {
                r.bucket_us[b] = std::llround(card.buckets[b] * scale);
                assigned += r.bucket_us[b];
            }
            // Rounding must not make the buckets disagree with the duration.
            const auto largest = std::max_element(r.bucket_us.begin(), r.bucket_us.end());
            *largest += m_span - assigned;
            r.active_us = std::clamp<DurationUs>(*r.active_us, 0, m_span);
        } else {
            r.util_source = telemetry::UtilSource::none;
        }
        if (tick.cards.size() == n) {
            tick.cards.emplace_back();
        }
        telemetry::CardTickRecord& out = tick.cards[n++];
        // Copy-assignments below reuse the storage of the previous tick's records.
        std::vector<telemetry::ProcessTick> processes = std::move(out.processes);
        out = r;
        out.processes = std::move(processes);
        out.processes.resize(card.live);
        for (std::size_t i = 0; i < card.live; ++i) {
            const ProcAcc& acc = card.processes[card.order[i]];
            telemetry::ProcessTick& p = out.processes[i];
            p = acc.tick;
            if (acc.sm_span > 0) {
                p.sm_util_pct = acc.sm_weighted / static_cast<double>(acc.sm_span);
            }
        }
    }
    tick.cards.resize(n);
    std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
        return a.device.index != b.device.index ? a.device.index < b.device.index
                                                : a.device.uuid < b.device.uuid;
    });
}

} // namespace gua::sampler

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
    drop_unseen();
    for (std::size_t i = 0; i < live; ++i) {
        ProcAcc& acc = processes[i];
        acc.seen = false;
        acc.tick.mem_used_mib.reset();
        acc.tick.sm_util_pct.reset();
        acc.sm_weighted = 0;
        acc.sm_span = 0;
    }
    hint = 0;
}

void TickBuilder::CardAcc::drop_unseen() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live; ++i) {
        if (processes[i].seen) {
            if (kept != i) {
                std::swap(processes[kept], processes[i]);
            }
            ++kept;
        }
    }
    if (kept == live) {
        return;
    }
    live = kept;
    order.resize(live);
    for (std::size_t i = 0; i < live; ++i) {
        order[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const telemetry::ProcessTick& x = processes[b].tick;
        return key_less(processes[a].tick, x.pid, x.type);
    });
}

std::vector<std::uint32_t>::iterator TickBuilder::CardAcc::position(std::uint32_t pid,
                                                                    telemetry::ProcessType type) {
    return std::lower_bound(order.begin(), order.end(), 0U, [&](std::uint32_t i, auto) {
        return key_less(processes[i].tick, pid, type);
    });
}

TickBuilder::ProcAcc* TickBuilder::CardAcc::find(std::uint32_t pid, telemetry::ProcessType type) {
    // Drivers list processes in the same order poll after poll: try the one after the last match.
    if (hint < order.size()) {
        ProcAcc& next = processes[order[hint]];
        if (next.tick.pid == pid && next.tick.type == type) {
            ++hint;
            return &next;
        }
    }
    const auto it = position(pid, type);
    hint = static_cast<std::size_t>(it - order.begin()) + 1;
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
    acc.seen = false;
    acc.serial.reset();
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
            }
            ProcAcc& acc = *found;
            if (!acc.seen) {
                acc.seen = true;
                refresh_identity(acc, p);
            }
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

void TickBuilder::refresh_identity(ProcAcc& acc, const telemetry::ProcessReading& reading) {
    if (reading.identity) {
        acc.fresh = true;
        acc.serial.reset();
        acc.tick.identity = *reading.identity;
        acc.tick.start_ticks.reset();
        return;
    }
    // A process seen in the previous tick usually resolves to the same facts: nothing to copy.
    const identity::ProcessFacts& facts = m_resolver.resolve(reading.pid);
    acc.fresh = acc.serial != facts.serial;
    if (acc.fresh) {
        acc.serial = facts.serial;
        acc.tick.identity = facts.identity;
        acc.tick.start_ticks = facts.start_ticks;
    }
}

void TickBuilder::finish(std::uint64_t seq, telemetry::Tick& tick) {
    const bool same_tick = &tick == m_last_out; // holding what the previous finish() wrote
    m_last_out = &tick;
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
        const bool same_card = same_tick && out.device.uuid == r.device.uuid;
        // Copy-assignments below reuse the storage of the previous tick's records.
        std::vector<telemetry::ProcessTick> processes = std::move(out.processes);
        out = r;
        out.processes = std::move(processes);
        std::size_t m = 0;
        for (const std::uint32_t index : card.order) {
            const ProcAcc& acc = card.processes[index];
            if (!acc.seen) {
                continue;
            }
            if (out.processes.size() == m) {
                out.processes.emplace_back();
            }
            telemetry::ProcessTick& p = out.processes[m++];
            // This card's entry of the previous tick for the same process holds its identity
            // already, unless that changed during this tick.
            if (!same_card || acc.fresh || p.pid != acc.tick.pid || p.type != acc.tick.type) {
                p.identity = acc.tick.identity;
            }
            p.pid = acc.tick.pid;
            p.start_ticks = acc.tick.start_ticks;
            p.type = acc.tick.type;
            p.mem_used_mib = acc.tick.mem_used_mib;
            p.sm_util_pct =
                acc.sm_span > 0
                    ? std::optional<double>(acc.sm_weighted / static_cast<double>(acc.sm_span))
                    : acc.tick.sm_util_pct;
        }
        out.processes.resize(m);
    }
    tick.cards.resize(n);
    std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
        return a.device.index != b.device.index ? a.device.index < b.device.index
                                                : a.device.uuid < b.device.uuid;
    });
}

} // namespace gua::sampler

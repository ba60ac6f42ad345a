// SPDX-License-Identifier: Apache-2.0
// FaultMerger and FaultAttributor (see merge.hpp).
#include "faults/merge.hpp"

#include <algorithm>
#include <cstdlib>

namespace gua::faults {

namespace {

bool by_time(const telemetry::FaultEvent& a, const telemetry::FaultEvent& b) {
    return a.at_us < b.at_us;
}

void merge_into(telemetry::FaultEvent& held, telemetry::FaultEvent&& e,
                const std::string& held_root) {
    telemetry::FaultEvent& kmsg = (e.sources & telemetry::fault_from_kmsg) != 0 ? e : held;
    telemetry::FaultEvent& nvml = (e.sources & telemetry::fault_from_kmsg) != 0 ? held : e;
    telemetry::FaultEvent out = std::move(kmsg);
    out.sources = held.sources | e.sources;
    out.at_us = std::min(held.at_us, e.at_us);
    if (!out.gpu_instance) {
        out.gpu_instance = nvml.gpu_instance;
        out.compute_instance = nvml.compute_instance;
    }
    if (out.uuid.empty() || (out.uuid == held_root && !nvml.uuid.empty())) {
        out.uuid = nvml.uuid; // NVML names the MIG instance; the log, its GPU
    }
    held = std::move(out);
}

} // namespace

void FaultMerger::set_cards(const std::vector<telemetry::DeviceInfo>& cards) {
    for (const telemetry::DeviceInfo& c : cards) {
        if (!c.parent_uuid.empty()) {
            m_parent[c.uuid] = c.parent_uuid;
        }
    }
}

std::string FaultMerger::root_of(const std::string& uuid) const {
    const auto it = m_parent.find(uuid);
    return it == m_parent.end() ? uuid : it->second;
}

bool FaultMerger::pairs(const telemetry::FaultEvent& held, const telemetry::FaultEvent& e) const {
    return (held.sources & e.sources) == 0 && held.xid == e.xid && !held.uuid.empty() &&
           root_of(held.uuid) == root_of(e.uuid) && std::llabs(held.at_us - e.at_us) <= k_window_us;
}

void FaultMerger::add(std::vector<telemetry::FaultEvent> events) {
    std::stable_sort(events.begin(), events.end(), by_time);
    for (telemetry::FaultEvent& e : events) {
        auto partner = m_pending.end();
        for (auto it = m_pending.begin(); it != m_pending.end(); ++it) {
            if (pairs(*it, e) && (partner == m_pending.end() || it->at_us < partner->at_us)) {
                partner = it;
            }
        }
        if (partner == m_pending.end()) {
            m_pending.push_back(std::move(e));
        } else {
            const std::string root = root_of(partner->uuid);
            merge_into(*partner, std::move(e), root);
        }
    }
}

std::vector<telemetry::FaultEvent> FaultMerger::take_settled(TimeUs now) {
    std::vector<telemetry::FaultEvent> out;
    const auto settled = [now](const telemetry::FaultEvent& e) {
        return e.sources == (telemetry::fault_from_nvml | telemetry::fault_from_kmsg) ||
               e.at_us + k_window_us < now;
    };
    std::vector<telemetry::FaultEvent> keep;
    for (telemetry::FaultEvent& e : m_pending) {
        (settled(e) ? out : keep).push_back(std::move(e));
    }
    m_pending = std::move(keep);
    std::stable_sort(out.begin(), out.end(), by_time);
    return out;
}

std::vector<telemetry::FaultEvent> FaultMerger::take_all() {
    std::vector<telemetry::FaultEvent> out = std::move(m_pending);
    m_pending.clear();
    std::stable_sort(out.begin(), out.end(), by_time);
    return out;
}

void FaultAttributor::on_tick(const telemetry::Tick& tick) {
    Seen seen{tick.t0, tick.t0 + tick.duration_us, {}};
    for (const telemetry::CardTickRecord& card : tick.cards) {
        CardProcesses c{card.device.uuid, card.device.parent_uuid, {}};
        for (const telemetry::ProcessTick& p : card.processes) {
            c.processes.push_back({p.pid, p.identity.command, p.identity});
        }
        seen.cards.push_back(std::move(c));
    }
    m_ticks.push_back(std::move(seen));
    if (m_ticks.size() > k_ticks_kept) {
        m_ticks.pop_front();
    }
}

void FaultAttributor::attribute(telemetry::FaultEvent& event) const {
    if (event.uuid.empty() || m_ticks.empty() || event.at_us < m_ticks.front().t0) {
        return;
    }
    const auto on_card = [&](const CardProcesses& c) {
        return c.uuid == event.uuid || c.parent_uuid == event.uuid;
    };
    if (event.pid) {
        for (auto t = m_ticks.rbegin(); t != m_ticks.rend(); ++t) {
            for (const CardProcesses& c : t->cards) {
                for (const telemetry::FaultHolder& p : c.processes) {
                    if (on_card(c) && p.pid == *event.pid) {
                        event.holders = {p};
                        return;
                    }
                }
            }
        }
    }
    const Seen* tick = &m_ticks.back();
    for (const Seen& t : m_ticks) {
        if (event.at_us >= t.t0 && event.at_us < t.t1) {
            tick = &t;
        }
    }
    event.holders.clear();
    for (const CardProcesses& c : tick->cards) {
        if (on_card(c)) {
            event.holders.insert(event.holders.end(), c.processes.begin(), c.processes.end());
        }
    }
}

} // namespace gua::faults

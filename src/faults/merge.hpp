// SPDX-License-Identifier: Apache-2.0
// FaultMerger: one event per fault when NVML and the kernel log both report it; and
// FaultAttributor: who was on the card at the fault's time, from the daemon's recent ticks.
#pragma once

#include "core/time.hpp"
#include "telemetry/fault_event.hpp"
#include "telemetry/tick.hpp"

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace gua::faults {

/// Merges the events of the two sources: an NVML event and a kernel log event of the same card
/// (a MIG instance matches its GPU) and code at most k_window_us apart are one fault, paired
/// greedily in time order, so that a burst of N identical Xids stays N. The merged event keeps
/// the kernel log's process, message and record id, NVML's MIG ids when the log lacks them,
/// the earlier time and both source bits.
class FaultMerger {
  public:
    static constexpr DurationUs k_window_us = 5 * k_us_per_second;

    /// The cards (MIG instances name their parent GPU).
    void set_cards(const std::vector<telemetry::DeviceInfo>& cards);
    /// Adds events from either source (any order).
    void add(std::vector<telemetry::FaultEvent> events);
    /// The events that can no longer pair (seen more than k_window_us before `now`), oldest first.
    std::vector<telemetry::FaultEvent> take_settled(TimeUs now);
    /// Every event held (at the daemon's stop).
    std::vector<telemetry::FaultEvent> take_all();
    /// Events waiting for a partner.
    std::size_t pending() const { return m_pending.size(); }

  private:
    std::string root_of(const std::string& uuid) const;
    bool pairs(const telemetry::FaultEvent& held, const telemetry::FaultEvent& e) const;

    std::map<std::string, std::string> m_parent; ///< MIG uuid → GPU uuid
    std::vector<telemetry::FaultEvent> m_pending;
};

/// Keeps the processes of the last ticks' cards and names the holders of a fault: the kernel
/// log's pid when that process was on the card, else every process on the card (or, for a
/// whole-GPU event in MIG mode, on its instances) in the tick that holds the fault's time.
/// A fault before the first kept tick gets no holders (nobody is invented).
class FaultAttributor {
  public:
    static constexpr std::size_t k_ticks_kept = 8;

    void on_tick(const telemetry::Tick& tick);
    void attribute(telemetry::FaultEvent& event) const;

  private:
    struct CardProcesses {
        std::string uuid;
        std::string parent_uuid;
        std::vector<telemetry::FaultHolder> processes;
    };
    struct Seen {
        TimeUs t0 = 0;
        TimeUs t1 = 0;
        std::vector<CardProcesses> cards;
    };
    std::deque<Seen> m_ticks;
};

} // namespace gua::faults

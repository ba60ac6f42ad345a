// SPDX-License-Identifier: Apache-2.0
// NvmlEventStream: Xid events from nvmlEventSetWait_v2, waited for on a thread of its own and
// handed to the daemon through telemetry::FaultStream.
#pragma once

#include "nvml/abi.hpp"
#include "nvml/library.hpp"
#include "telemetry/fault_event.hpp"

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gua::nvml {

/// A physical GPU to register for events, with the MIG instances it holds (GPU instance id →
/// the instance's uuid) so that an attributable event names the instance gua records.
struct EventCard {
    nvmlDevice_t handle = nullptr;
    std::string uuid;
    std::map<unsigned, std::string> instances;
};

/// Registers every card for Xid events (those whose driver supports them) on one event set and
/// waits on it from its own thread; stopped and joined by the destructor within one wait
/// (k_wait_ms). A card that answers NOT_SUPPORTED is left out; the others still register.
class NvmlEventStream final : public telemetry::FaultStream {
  public:
    /// How long one nvmlEventSetWait_v2 may sleep: the most a stop waits for the thread.
    static constexpr unsigned k_wait_ms = 250;

    /// Creates the set and registers `cards`; the library must outlive the stream.
    NvmlEventStream(const Library& library, std::vector<EventCard> cards);
    ~NvmlEventStream() override;
    NvmlEventStream(const NvmlEventStream&) = delete;
    NvmlEventStream& operator=(const NvmlEventStream&) = delete;

    void drain(std::vector<telemetry::FaultEvent>& out) override;
    std::string describe() const override { return m_description; }
    /// Number of cards registered for Xid events.
    std::size_t registered() const { return m_registered; }

  private:
    void run(const std::stop_token& stop);
    void deliver(const nvmlEventData_t& data);

    const Library& m_library;
    std::vector<EventCard> m_cards;
    nvmlEventSet_t m_set = nullptr;
    std::size_t m_registered = 0;
    std::string m_description;
    std::mutex m_mutex;
    std::vector<telemetry::FaultEvent> m_pending; ///< guarded by m_mutex
    std::jthread m_thread;                        ///< last: joined before the rest is destroyed
};

} // namespace gua::nvml

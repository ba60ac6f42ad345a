// SPDX-License-Identifier: Apache-2.0
// NvmlEventStream: registration, the wait loop and its stop (see events.hpp).
#include "nvml/events.hpp"

#include "core/time.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>

namespace gua::nvml {

namespace {

/// What gua registers: Xid critical errors only (ECC events also come as Xid 48/63/64/94/95).
constexpr unsigned long long k_xid_event_types = nvmlEventTypeXidCriticalError;

/// Sleeps `ms`, or less when a stop is requested.
void nap_for(const std::stop_token& stop, int ms) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, std::chrono::milliseconds(ms), [] { return false; });
}

} // namespace

NvmlEventStream::NvmlEventStream(const Library& library, std::vector<EventCard> cards)
    : m_library(library), m_cards(std::move(cards)) {
    if (!m_library.has(Entry::event_set_wait) || !m_library.has(Entry::device_register_events)) {
        m_description = "NVML events: not available (the driver lacks nvmlEventSetWait_v2)";
        return;
    }
    if (const nvmlReturn_t rc = m_library.call<Entry::event_set_create>(&m_set);
        rc != NVML_SUCCESS) {
        m_set = nullptr;
        m_description = "NVML events: nvmlEventSetCreate: " + m_library.error_string(rc);
        return;
    }
    std::string refused;
    for (const EventCard& card : m_cards) {
        unsigned long long supported = k_xid_event_types;
        if (m_library.has(Entry::device_get_supported_event_types)) {
            if (m_library.call<Entry::device_get_supported_event_types>(card.handle, &supported) !=
                NVML_SUCCESS) {
                supported = 0;
            }
        }
        const unsigned long long mask = supported & k_xid_event_types;
        const nvmlReturn_t rc =
            mask == 0 ? NVML_ERROR_NOT_SUPPORTED
                      : m_library.call<Entry::device_register_events>(card.handle, mask, m_set);
        if (rc == NVML_SUCCESS) {
            ++m_registered;
        } else {
            refused += fmt::format("{}{} ({})", refused.empty() ? "" : ", ", card.uuid,
                                   m_library.error_string(rc));
        }
    }
    m_description = fmt::format("NVML events: Xid on {} of {} GPUs", m_registered, m_cards.size());
    if (!refused.empty()) {
        m_description += "; not registered: " + refused;
    }
    if (m_registered > 0) {
        m_thread = std::jthread([this](const std::stop_token& stop) { run(stop); });
    }
}

NvmlEventStream::~NvmlEventStream() {
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join(); // within one wait: never free the set while it is waited on
    }
    if (m_set != nullptr) {
        static_cast<void>(m_library.call<Entry::event_set_free>(m_set));
    }
}

void NvmlEventStream::drain(std::vector<telemetry::FaultEvent>& out) {
    std::lock_guard lock(m_mutex);
    for (telemetry::FaultEvent& e : m_pending) {
        out.push_back(std::move(e));
    }
    m_pending.clear();
}

void NvmlEventStream::run(const std::stop_token& stop) {
    try {
        while (!stop.stop_requested()) {
            nvmlEventData_t data{};
            data.gpuInstanceId = NVML_INSTANCE_ID_NONE;
            data.computeInstanceId = NVML_INSTANCE_ID_NONE;
            const nvmlReturn_t rc = m_library.call<Entry::event_set_wait>(m_set, &data, k_wait_ms);
            if (rc == NVML_SUCCESS) {
                deliver(data);
            } else if (rc == NVML_ERROR_GPU_IS_LOST) {
                nap_for(stop, static_cast<int>(k_wait_ms)); // the sampler reports the card lost
            } else if (rc != NVML_ERROR_TIMEOUT) {
                nap_for(stop, 5000); // UNKNOWN / UNINITIALIZED: back off, try again
            }
        }
    } catch (...) { // nothing escapes a thread; the stream just goes quiet
    }
}

void NvmlEventStream::deliver(const nvmlEventData_t& data) {
    if ((data.eventType & nvmlEventTypeXidCriticalError) == 0) {
        return;
    }
    telemetry::FaultEvent event;
    event.at_us = wall_now();
    event.xid = static_cast<int>(data.eventData);
    event.sources = telemetry::fault_from_nvml;
    for (const EventCard& card : m_cards) {
        if (card.handle != data.device) {
            continue;
        }
        event.uuid = card.uuid;
        if (data.gpuInstanceId != NVML_INSTANCE_ID_NONE) {
            event.gpu_instance = data.gpuInstanceId;
            if (const auto it = card.instances.find(data.gpuInstanceId);
                it != card.instances.end()) {
                event.uuid = it->second;
            }
        }
        if (data.computeInstanceId != NVML_INSTANCE_ID_NONE) {
            event.compute_instance = data.computeInstanceId;
        }
    }
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(event));
}

} // namespace gua::nvml

// SPDX-License-Identifier: Apache-2.0
// NvmlSource: card enumeration (MIG instances included), re-probing of lost cards, and the poll
// loop over cards; reading one card lives in card_reader.cpp.
#include "nvml/nvml_source.hpp"

#include "nvml/card_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace gua::nvml {
namespace {

std::string bounded(const char* text, std::size_t capacity) {
    return std::string(text, strnlen(text, capacity));
}

} // namespace

NvmlSource::NvmlSource(std::unique_ptr<Library> library) : m_library(std::move(library)) {
    m_state.process_stride = {
        m_library->process_info_stride(Entry::device_get_compute_running_processes),
        m_library->process_info_stride(Entry::device_get_graphics_running_processes),
        m_library->process_info_stride(Entry::device_get_mps_compute_running_processes)};
}

std::string NvmlSource::driver_version() {
    return m_library->driver_version();
}

std::vector<telemetry::DeviceInfo> NvmlSource::devices() {
    enumerate();
    std::vector<telemetry::DeviceInfo> out;
    out.reserve(m_cards.size());
    for (const Card& card : m_cards) {
        out.push_back(card.info);
    }
    return out;
}

std::optional<unsigned> NvmlSource::gpu_instance_of(const std::string& uuid) const {
    for (const Card& card : m_cards) {
        if (card.info.uuid == uuid && card.parent != nullptr) {
            return card.gpu_instance_id;
        }
    }
    return std::nullopt;
}

std::vector<telemetry::DevicePoll> NvmlSource::poll(TimeUs now) {
    std::vector<telemetry::DevicePoll> out;
    poll_into(now, out);
    return out;
}

void NvmlSource::poll_into(TimeUs now, std::vector<telemetry::DevicePoll>& out) {
    if (!m_enumerated) {
        enumerate();
    }
    out.resize(m_cards.size());
    for (std::size_t i = 0; i < m_cards.size(); ++i) {
        Card& card = m_cards[i];
        if (card.lost && !reprobe(card)) {
            clear_poll(card, out[i]);
            out[i].lost = true;
            card.last_poll = now;
            continue;
        }
        read_card(*m_library, card, now, m_state, out[i]);
        read_gpm(card, now, out[i]);
    }
    m_notices.update(m_state.diagnostics, now, max_poll_span_us());
}

DurationUs NvmlSource::max_poll_span_us() const {
    DurationUs span = telemetry::k_default_max_poll_span_us;
    if (!m_library->has(Entry::device_get_samples)) {
        return span;
    }
    for (const Card& card : m_cards) {
        if (!card.mig_slot && !card.lost && card.samples_supported) {
            span = std::min(span, card.util.affordable_span_us());
        }
    }
    return span;
}

std::string NvmlSource::measurement_note() {
    if (!m_enumerated) {
        enumerate();
    }
    const bool rings = m_library->has(Entry::device_get_samples);
    std::string cards;
    std::size_t count = 0;
    std::size_t with_util = 0;
    for (Card& card : m_cards) {
        if (card.mig_slot || card.lost) {
            continue;
        }
        ++with_util;
        if (rings && card.samples_supported) {
            nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
            unsigned int size = 0;
            const nvmlReturn_t rc = m_library->call<Entry::device_get_samples>(
                card.handle, NVML_GPU_UTILIZATION_SAMPLES, 0, &type, &size, nullptr);
            card.samples_supported =
                rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND;
        }
        if (!rings || !card.samples_supported) {
            cards += fmt::format("{}GPU {}", count == 0 ? "" : ", ", card.info.index);
            ++count;
        }
    }
    if (count == 0) {
        return {};
    }
    return fmt::format(
        "utilization of {} comes from one snapshot per poll ({}): each reading shows only the "
        "last 1/6-1 s of a poll span of up to 5 s, so bursty work can be misread, by up to 97 pp "
        "in one card-tick, about 50 pp/sqrt(polls) on work not in step with the polls (see "
        "docs/measurement.md)",
        count == with_util ? "every GPU" : cards,
        rings ? "the driver keeps no utilization samples for it"
              : "this driver has no nvmlDeviceGetSamples");
}

void NvmlSource::read_gpm(Card& card, TimeUs now, telemetry::DevicePoll& poll) {
    std::unique_ptr<GpmRing>& ring = m_gpm[card.info.uuid];
    if (!ring) {
        ring = std::make_unique<GpmRing>(*m_library);
    }
    if (poll.lost) {
        ring->restart();
        return;
    }
    // A MIG instance is sampled through its parent by GPU instance id; without that id, through
    // its own handle.
    const GpmTarget target = card.parent != nullptr && card.gpu_instance_id
                                 ? GpmTarget{card.parent, card.gpu_instance_id}
                                 : GpmTarget{card.handle, std::nullopt};
    bool lost = false;
    ring->read(target, now, poll.readings, poll.read_errors, lost);
    if (lost) {
        card.lost = true;
        ring->restart();
        clear_poll(card, poll);
        poll.lost = true;
    }
}

void NvmlSource::enumerate() {
    m_enumerated = true;
    unsigned int count = 0;
    if (m_library->call<Entry::device_get_count>(&count) != NVML_SUCCESS) {
        return;
    }
    std::vector<Card> fresh;
    for (unsigned int index = 0; index < count; ++index) {
        nvmlDevice_t handle = nullptr;
        const nvmlReturn_t rc = m_library->call<Entry::device_get_handle_by_index>(index, &handle);
        if (rc == NVML_SUCCESS) {
            add_physical(index, handle, fresh);
        } else if (rc == NVML_ERROR_GPU_IS_LOST) {
            keep_lost(index, fresh);
        }
    }
    for (Card& card : fresh) {
        const auto old = std::find_if(m_cards.begin(), m_cards.end(),
                                      [&](const Card& c) { return c.info.uuid == card.info.uuid; });
        if (old != m_cards.end() && !card.lost) {
            card.samples_supported = old->samples_supported;
            card.last_poll = old->last_poll;
            card.util = old->util;
            card.process_util = old->process_util;
        }
    }
    m_cards = std::move(fresh);
    std::erase_if(m_gpm, [&](const auto& item) {
        return std::none_of(m_cards.begin(), m_cards.end(),
                            [&](const Card& c) { return c.info.uuid == item.first; });
    });
}

void NvmlSource::add_physical(unsigned int index, nvmlDevice_t handle, std::vector<Card>& fresh) {
    Card physical;
    physical.handle = handle;
    physical.index = index;
    if (const nvmlReturn_t rc = describe(handle, physical); rc != NVML_SUCCESS) {
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            keep_lost(index, fresh);
        }
        return;
    }
    unsigned int current = 0;
    unsigned int pending = 0;
    if (m_library->call<Entry::device_get_mig_mode>(handle, &current, &pending) == NVML_SUCCESS &&
        current == NVML_DEVICE_MIG_ENABLE) {
        unsigned int slots = 0;
        m_library->call<Entry::device_get_max_mig_device_count>(handle, &slots);
        bool any = false;
        for (unsigned int slot = 0; slot < slots; ++slot) {
            Card mig;
            mig.index = index;
            mig.mig_slot = slot;
            if (m_library->call<Entry::device_get_mig_device_handle_by_index>(
                    handle, slot, &mig.handle) != NVML_SUCCESS ||
                describe(mig.handle, mig) != NVML_SUCCESS) {
                continue;
            }
            mig.info.parent_uuid = physical.info.uuid;
            mig.parent = handle;
            unsigned int gpu_instance = 0;
            if (m_library->call<Entry::device_get_gpu_instance_id>(mig.handle, &gpu_instance) ==
                NVML_SUCCESS) {
                mig.gpu_instance_id = gpu_instance;
            }
            if (mig.info.name.find(physical.info.name) == std::string::npos) {
                // Some drivers name an instance by its profile alone ("MIG 3g.40gb"): keep the
                // model in front so that pricing and reports know which card it slices.
                mig.info.name = physical.info.name + " " + mig.info.name;
            }
            fresh.push_back(std::move(mig));
            any = true;
        }
        if (any) {
            return;
        }
    }
    fresh.push_back(std::move(physical));
}

void NvmlSource::keep_lost(unsigned int index, std::vector<Card>& fresh) const {
    for (const Card& old : m_cards) {
        if (old.index == index) {
            fresh.push_back(old);
            fresh.back().lost = true;
        }
    }
}

nvmlReturn_t NvmlSource::describe(nvmlDevice_t handle, Card& card) const {
    if (const nvmlReturn_t rc = read_uuid(*m_library, handle, card.info.uuid); rc != NVML_SUCCESS) {
        return rc;
    }
    card.info.index = static_cast<int>(card.index);
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (m_library->call<Entry::device_get_name>(handle, &name[0],
                                                NVML_DEVICE_NAME_V2_BUFFER_SIZE) == NVML_SUCCESS) {
        card.info.name = bounded(name, sizeof(name));
    }
    nvmlPciInfo_t pci{};
    if (m_library->call<Entry::device_get_pci_info>(handle, &pci) == NVML_SUCCESS) {
        const bool legacy_only = m_library->variant(Entry::device_get_pci_info) == 2;
        card.info.pci_bus_id = legacy_only || pci.busId[0] == '\0'
                                   ? bounded(pci.busIdLegacy, sizeof(pci.busIdLegacy))
                                   : bounded(pci.busId, sizeof(pci.busId));
    }
    std::optional<std::uint64_t> total;
    if (m_library->variant(Entry::device_get_memory_info) == 0) {
        nvmlMemory_v2_t memory{};
        memory.version = nvmlMemory_v2;
        if (m_library->call<Entry::device_get_memory_info>(handle, &memory) == NVML_SUCCESS) {
            total = memory.total;
        }
    } else {
        nvmlMemory_t memory{};
        if (m_library->call<Entry::device_get_memory_info>(handle, &memory) == NVML_SUCCESS) {
            total = memory.total;
        }
    }
    if (total && *total > 0) {
        card.memory_total_bytes = total;
        card.info.memory_total_mib = bytes_to_mib(*total);
    }
    return NVML_SUCCESS;
}

bool NvmlSource::reprobe(Card& card) const {
    nvmlDevice_t handle = nullptr;
    if (m_library->call<Entry::device_get_handle_by_index>(card.index, &handle) != NVML_SUCCESS) {
        return false;
    }
    if (card.mig_slot) {
        nvmlDevice_t mig = nullptr;
        if (m_library->call<Entry::device_get_mig_device_handle_by_index>(handle, *card.mig_slot,
                                                                          &mig) != NVML_SUCCESS) {
            return false;
        }
        card.parent = handle;
        handle = mig;
    }
    std::string uuid;
    if (read_uuid(*m_library, handle, uuid) != NVML_SUCCESS || uuid != card.info.uuid) {
        return false;
    }
    card.handle = handle;
    card.lost = false;
    card.util.reset();
    card.process_util.reset();
    return true;
}

} // namespace gua::nvml

// SPDX-License-Identifier: Apache-2.0
// NvmlSource: enumerating the cards (MIG instances included) again and again as they come and go,
// the indices the driver counts but cannot open, cards known from earlier runs, re-probing.
#include "nvml/card_reader.hpp"
#include "nvml/nvml_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace gua::nvml {
namespace {

std::string bounded(const char* text, std::size_t capacity) {
    return std::string(text, strnlen(text, capacity));
}

bool has_uuid(const std::vector<Card>& cards, const std::string& uuid) {
    return std::any_of(cards.begin(), cards.end(),
                       [&](const Card& c) { return c.info.uuid == uuid; });
}

void sort_by_index(std::vector<Card>& cards) {
    std::stable_sort(cards.begin(), cards.end(),
                     [](const Card& a, const Card& b) { return a.index < b.index; });
}

} // namespace

std::vector<telemetry::UnopenedDevice> NvmlSource::unopened_devices() {
    if (!m_enumerated) {
        enumerate(std::nullopt);
    }
    std::vector<telemetry::UnopenedDevice> out;
    for (const Unopened& u : m_unopened) {
        out.push_back({static_cast<int>(u.index),
                       fmt::format("{}: {} (error {})", u.function, m_library->error_string(u.rc),
                                   static_cast<int>(u.rc))});
    }
    return out;
}

void NvmlSource::expect_devices(const std::vector<telemetry::DeviceInfo>& known) {
    if (!m_enumerated) {
        enumerate(std::nullopt);
    }
    for (const Unopened& u : m_unopened) {
        const bool listed = std::any_of(m_cards.begin(), m_cards.end(),
                                        [&](const Card& c) { return c.index == u.index; });
        const telemetry::DeviceInfo* last = nullptr;
        for (const telemetry::DeviceInfo& d : known) {
            if (d.index == static_cast<int>(u.index) && d.parent_uuid.empty() &&
                !has_uuid(m_cards, d.uuid)) {
                last = &d;
            }
        }
        if (listed || (last == nullptr && u.rc == NVML_ERROR_NO_PERMISSION)) {
            continue; // a card this daemon may not open is not its to record
        }
        Card card;
        card.index = u.index;
        card.lost = true; // re-probed at every poll; enumerated afresh once its index opens
        if (last != nullptr && !telemetry::is_stand_in(last->uuid)) {
            card.info = *last;
            m_notices.say(fmt::format("NVML: GPU {} did not open; {} ({}), the card recorded at "
                                      "that index before, is recorded as lost (unmeasured) until "
                                      "it opens",
                                      u.index, last->uuid, last->name));
        } else {
            card.info.uuid = telemetry::stand_in_uuid(static_cast<int>(u.index));
            card.info.index = static_cast<int>(u.index);
            card.info.name = telemetry::k_stand_in_name;
            m_notices.say(fmt::format("NVML: GPU {} did not open and was never recorded; its time "
                                      "is recorded as unmeasured under {} until it opens",
                                      u.index, card.info.uuid));
        }
        m_cards.push_back(std::move(card));
    }
    sort_by_index(m_cards);
}

bool NvmlSource::enumeration_due(TimeUs now) {
    if (!m_enumerated || m_count_failed) {
        return true;
    }
    if (!m_last_enumeration) {
        m_last_enumeration = now; // enumerated before the first poll
    }
    if (now - *m_last_enumeration >= k_enumeration_period_us) {
        return true;
    }
    // An index that did not open is tried at every poll (one call while it still fails), so a
    // card is recorded from the poll at which it opens.
    for (const Unopened& u : m_unopened) {
        nvmlDevice_t handle = nullptr;
        std::string uuid;
        if (m_library->call<Entry::device_get_handle_by_index>(u.index, &handle) == NVML_SUCCESS &&
            read_uuid(*m_library, handle, uuid) == NVML_SUCCESS) {
            return true;
        }
    }
    return false;
}

void NvmlSource::enumerate(std::optional<TimeUs> now) {
    m_enumerated = true;
    m_last_enumeration = now;
    unsigned int count = 0;
    m_count_failed = m_library->call<Entry::device_get_count>(&count) != NVML_SUCCESS;
    if (m_count_failed) {
        return; // the cards stay as they are; counted again at the next poll
    }
    std::vector<Card> fresh;
    std::vector<Unopened> unopened;
    for (unsigned int index = 0; index < count; ++index) {
        nvmlDevice_t handle = nullptr;
        nvmlReturn_t rc = m_library->call<Entry::device_get_handle_by_index>(index, &handle);
        const char* function = "nvmlDeviceGetHandleByIndex";
        if (rc == NVML_SUCCESS) {
            rc = add_physical(index, handle, fresh);
            function = "nvmlDeviceGetUUID";
        }
        if (rc != NVML_SUCCESS) {
            unopened.push_back({index, function, rc});
        }
    }
    m_unopened = std::move(unopened);
    merge_known(fresh, count);
    m_cards = std::move(fresh);
    std::erase_if(m_gpm, [&](const auto& item) { return !has_uuid(m_cards, item.first); });
}

void NvmlSource::merge_known(std::vector<Card>& fresh, unsigned int count) {
    for (Card& card : fresh) {
        auto old = std::find_if(m_cards.begin(), m_cards.end(),
                                [&](const Card& c) { return c.info.uuid == card.info.uuid; });
        if (old == m_cards.end() && card.info.parent_uuid.empty()) {
            old = std::find_if(m_cards.begin(), m_cards.end(), [&](const Card& c) {
                return c.index == card.index && telemetry::is_stand_in(c.info.uuid);
            });
            if (old != m_cards.end()) {
                // The card the stand-in waited for: it takes the stand-in's place (and row), the
                // poll's span before it opened stays unmeasured, as for a card back from lost.
                card.info.replaces = old->info.uuid;
                card.last_poll = old->last_poll;
                m_notices.say(fmt::format("NVML: GPU {} ({}) opened; it takes over {} and the time "
                                          "it did not open stays unmeasured",
                                          card.info.index, card.info.uuid, old->info.uuid));
                continue;
            }
        }
        if (old == m_cards.end()) {
            // A card first seen mid-run: its first poll primes its cursors and leaves the span
            // since the previous poll unmeasured (the card was not watched then).
            card.last_poll = m_last_poll;
            if (m_last_poll) {
                m_notices.say(fmt::format("NVML: GPU {} ({}) appeared; recording it from now on",
                                          card.info.index, card.info.uuid));
            }
            continue;
        }
        card.last_poll = old->last_poll;
        if (!old->lost) {
            card.samples_supported = old->samples_supported;
            card.util = old->util;
            card.process_util = old->process_util;
            card.list_capacity = old->list_capacity;
            card.ring_capacity = old->ring_capacity;
            card.process_sample_capacity = old->process_sample_capacity;
        } // back from lost: the cursors start again, the poll's span stays unmeasured
    }
    const auto opened = [&](unsigned int index) {
        return index < count && std::none_of(m_unopened.begin(), m_unopened.end(),
                                             [&](const Unopened& u) { return u.index == index; });
    };
    for (const Card& old : m_cards) {
        if (has_uuid(fresh, old.info.uuid) ||
            std::any_of(fresh.begin(), fresh.end(),
                        [&](const Card& c) { return c.info.replaces == old.info.uuid; })) {
            continue;
        }
        if (!opened(old.index)) {
            // A known card whose index does not open (or is no longer counted): listed as lost,
            // so its time is recorded as unmeasured.
            fresh.push_back(old);
            fresh.back().lost = true;
        } else {
            m_notices.say(fmt::format("NVML: GPU {} ({}) is gone: its index shows other cards "
                                      "now (replaced, or MIG instances reconfigured)",
                                      old.info.index, old.info.uuid));
        }
    }
    sort_by_index(fresh);
}

void NvmlSource::report_unopened() {
    if (!m_notices.has_sink()) {
        return; // nobody to tell yet: the daemon's log hears of them once it listens
    }
    std::vector<telemetry::UnopenedDevice> now = unopened_devices();
    for (const telemetry::UnopenedDevice& u : now) {
        if (std::find(m_reported_unopened.begin(), m_reported_unopened.end(), u) ==
            m_reported_unopened.end()) {
            m_notices.say(fmt::format("NVML could not open GPU {}: {}; trying it again at every "
                                      "poll",
                                      u.index, u.error));
        }
    }
    for (const telemetry::UnopenedDevice& u : m_reported_unopened) {
        const bool still =
            std::any_of(now.begin(), now.end(), [&](const auto& n) { return n.index == u.index; });
        if (!still) {
            m_notices.say(fmt::format("NVML opens GPU {} again", u.index));
        }
    }
    m_reported_unopened = std::move(now);
}

nvmlReturn_t NvmlSource::add_physical(unsigned int index, nvmlDevice_t handle,
                                      std::vector<Card>& fresh) {
    Card physical;
    physical.handle = handle;
    physical.index = index;
    if (const nvmlReturn_t rc = describe(handle, physical); rc != NVML_SUCCESS) {
        return rc;
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
            return NVML_SUCCESS;
        }
    }
    fresh.push_back(std::move(physical));
    return NVML_SUCCESS;
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

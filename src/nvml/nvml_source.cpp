// SPDX-License-Identifier: Apache-2.0
// NvmlSource: the poll loop over cards; reading one card lives in card_reader.cpp, enumerating
// the cards (and re-probing lost ones) in enumeration.cpp.
#include "nvml/nvml_source.hpp"

#include "nvml/card_reader.hpp"
#include "nvml/events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace gua::nvml {
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
    if (!m_enumerated) {
        enumerate(std::nullopt);
    }
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
    if (enumeration_due(now)) {
        enumerate(now);
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
    if (m_last_poll) {
        note_fast_polls(now - *m_last_poll);
    }
    m_last_poll = now;
    m_notices.update(m_state.diagnostics, now, max_poll_span_us());
    report_unopened();
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
        enumerate(std::nullopt);
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

void NvmlSource::note_fast_polls(DurationUs span_us) {
    if (m_fast_polls_said || !m_notices.has_sink() || span_us <= 0) {
        return;
    }
    for (const Card& card : m_cards) {
        const DurationUs p = card.util.period_us();
        if (card.mig_slot || card.lost || !card.util.period_known() || 2 * span_us >= 3 * p) {
            continue;
        }
        m_fast_polls_said = true;
        m_notices.say(fmt::format(
            "polls every {} ms come faster than GPU {}'s utilization ring writes (one sample every "
            "{} ms): a poll that finds no new sample leaves its span unmeasured while the card is "
            "busy, up to {:.0f} % of the time; an interval of at least {} ms avoids it (see "
            "docs/measurement.md, \"Adaptive polling\")",
            span_us / k_us_per_ms, card.info.index, p / k_us_per_ms,
            100.0 * (1.0 - static_cast<double>(span_us) / static_cast<double>(p)),
            (3 * p / 2 + k_us_per_ms - 1) / k_us_per_ms));
        return;
    }
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

std::unique_ptr<telemetry::FaultStream> NvmlSource::open_fault_stream() {
    if (!m_enumerated) {
        enumerate(std::nullopt);
    }
    std::vector<EventCard> cards;
    const auto physical = [&cards](nvmlDevice_t handle) -> EventCard* {
        for (EventCard& c : cards) {
            if (c.handle == handle) {
                return &c;
            }
        }
        return nullptr;
    };
    for (const Card& card : m_cards) {
        if (card.lost) {
            continue;
        }
        const nvmlDevice_t handle = card.mig_slot ? card.parent : card.handle;
        EventCard* entry = physical(handle);
        if (entry == nullptr) {
            cards.push_back(
                EventCard{handle, card.mig_slot ? card.info.parent_uuid : card.info.uuid, {}});
            entry = &cards.back();
        }
        if (card.mig_slot && card.gpu_instance_id) {
            entry->instances[*card.gpu_instance_id] = card.info.uuid;
        }
    }
    return std::make_unique<NvmlEventStream>(*m_library, std::move(cards));
}

} // namespace gua::nvml

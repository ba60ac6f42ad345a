// SPDX-License-Identifier: Apache-2.0
// One poll of one card: each reading is a driver call whose return code decides between a
// value, "not supported" (nullopt), a counted read error, or a lost card.
#include "nvml/card_reader.hpp"

#include "nvml/bus_poll.hpp"
#include "nvml/process_list.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace gua::nvml {
namespace {

constexpr std::uint64_t k_bytes_per_mib = 1024ULL * 1024ULL;
constexpr unsigned int k_max_process_samples = 4096;
constexpr unsigned int k_sample_headroom = 16;
/// No card draws or is limited to more than this (the largest boards of 2025 are near 1.2 kW).
constexpr std::int64_t k_max_card_power_mw = 10'000'000;
/// A reading above this many times the enforced limit is junk (averaged draw exceeds the limit
/// only briefly and by far less).
constexpr std::int64_t k_power_over_limit = 2;

/// Classifies the return codes of one card's poll.
class Status {
  public:
    /// True on success; counts unexpected failures; NOT_SUPPORTED and a missing symbol are silent.
    bool ok(nvmlReturn_t rc) {
        switch (rc) {
        case NVML_SUCCESS:
            return true;
        case NVML_ERROR_NOT_SUPPORTED:
        case NVML_ERROR_FUNCTION_NOT_FOUND:
            return false;
        case NVML_ERROR_GPU_IS_LOST:
            m_lost = true;
            return false;
        default:
            ++m_errors;
            return false;
        }
    }
    bool lost() const { return m_lost; }
    int errors() const { return m_errors; }

  private:
    bool m_lost = false;
    int m_errors = 0;
};

/// The integer a field value holds, or nullopt for an unknown type or a value out of range.
std::optional<std::int64_t> integer_of(nvmlValueType_t type, const nvmlValue_t& v) {
    switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
        return std::isfinite(v.dVal) && std::fabs(v.dVal) < 9e18
                   ? std::optional<std::int64_t>(std::llround(v.dVal))
                   : std::nullopt;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
        return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: {
        const unsigned long long u = type == NVML_VALUE_TYPE_UNSIGNED_LONG
                                         ? static_cast<unsigned long long>(v.ulVal)
                                         : v.ullVal;
        return u <= static_cast<unsigned long long>(INT64_MAX)
                   ? std::optional<std::int64_t>(static_cast<std::int64_t>(u))
                   : std::nullopt;
    }
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return v.sllVal;
    case NVML_VALUE_TYPE_SIGNED_INT:
        return v.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
        return v.usVal;
    }
    return std::nullopt;
}

double value_of(nvmlValueType_t type, const nvmlValue_t& v) {
    switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
        return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
        return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
        return v.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
        return v.usVal;
    }
    return -1.0;
}

/// Reads the GPU-utilization ring after `cursor` into `out`; NOT_FOUND (or an empty size reply)
/// = no samples. A known `capacity` skips the size query unless the reply fills it (entries may
/// then have been left out: the size is asked for and the read repeated).
nvmlReturn_t read_ring(const Library& lib, nvmlDevice_t h, std::uint64_t cursor,
                       unsigned int& capacity, PollBuffers& buffers) {
    std::vector<RingSample>& out = buffers.ring;
    out.clear();
    nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
    for (int attempt = 0; attempt < 2; ++attempt) {
        unsigned int count = 0;
        if (capacity == 0) {
            const nvmlReturn_t rc = lib.call<Entry::device_get_samples>(
                h, NVML_GPU_UTILIZATION_SAMPLES, cursor, &type, &count, nullptr);
            if (rc != NVML_SUCCESS || count == 0) {
                return rc == NVML_SUCCESS ? NVML_ERROR_NOT_FOUND : rc;
            }
            capacity = count + k_sample_headroom;
        }
        buffers.samples.resize(capacity);
        count = capacity;
        const nvmlReturn_t rc = lib.call<Entry::device_get_samples>(
            h, NVML_GPU_UTILIZATION_SAMPLES, cursor, &type, &count, buffers.samples.data());
        const bool full =
            rc == NVML_ERROR_INSUFFICIENT_SIZE || (rc == NVML_SUCCESS && count >= capacity);
        if (full && attempt == 0) {
            capacity = 0;
            continue;
        }
        if (rc != NVML_SUCCESS) {
            if (rc != NVML_ERROR_NOT_FOUND) {
                capacity = 0;
            }
            return rc;
        }
        const std::size_t written = std::min<std::size_t>(count, capacity);
        for (std::size_t i = 0; i < written; ++i) {
            const nvmlSample_t& s = buffers.samples[i];
            out.push_back({s.timeStamp, value_of(type, s.sampleValue)});
        }
        return NVML_SUCCESS;
    }
    return NVML_SUCCESS;
}

/// The number of entries the whole GPU-utilization ring holds now (a size query from 0), or
/// nullopt when the driver does not say.
std::optional<std::size_t> read_ring_total(const Library& lib, nvmlDevice_t h) {
    nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
    unsigned int count = 0;
    const nvmlReturn_t rc = lib.call<Entry::device_get_samples>(h, NVML_GPU_UTILIZATION_SAMPLES, 0,
                                                                &type, &count, nullptr);
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) {
        return rc == NVML_SUCCESS ? count : 0U;
    }
    return std::nullopt;
}

/// Marks the whole span of `poll` unmeasured (a utilization reading was expected and failed).
void unmeasured(std::optional<DurationUs> span, telemetry::DevicePoll& poll) {
    poll.util.clear();
    if (span) {
        poll.unmeasured_us = std::max<DurationUs>(*span, 1);
        poll.util_source = telemetry::UtilSource::partial;
    }
}

void read_utilization(const Library& lib, Card& card, TimeUs now, SourceState& state,
                      Status& status, telemetry::DevicePoll& poll) {
    nvmlUtilization_t rates{};
    std::optional<double> snapshot;
    const nvmlReturn_t rates_rc =
        lib.call<Entry::device_get_utilization_rates>(card.handle, &rates);
    if (status.ok(rates_rc)) {
        snapshot = rates.gpu <= 100 ? std::optional<double>(rates.gpu) : std::nullopt;
        if (rates.memory <= 100) {
            poll.readings.mem_util_pct = rates.memory;
        }
    }
    const std::optional<DurationUs> span =
        card.last_poll ? std::optional<DurationUs>(now - *card.last_poll) : std::nullopt;
    if (card.samples_supported && lib.has(Entry::device_get_samples)) {
        const bool priming = !card.util.primed() || !span;
        if (priming) {
            card.ring_capacity = 0; // the whole ring: ask for its size
        }
        const nvmlReturn_t rc = read_ring(lib, card.handle, priming ? 0 : card.util.cursor_us(),
                                          card.ring_capacity, state.buffers);
        if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) {
            if (priming) {
                card.util.prime(state.buffers.ring);
                if (span) { // primed again mid-run: nothing integrates this span
                    unmeasured(span, poll);
                    return;
                }
            } else {
                const std::optional<std::size_t> total =
                    card.util.wants_ring_total(state.buffers.ring.size())
                        ? read_ring_total(lib, card.handle)
                        : std::nullopt;
                RingFold& fold = state.buffers.fold;
                fold.samples.swap(poll.util);
                card.util.fold(state.buffers.ring, *span, snapshot, fold, total);
                poll.util.swap(fold.samples);
                poll.unmeasured_us = fold.unmeasured_us;
                poll.util_source = fold.unmeasured_us > 0 ? telemetry::UtilSource::partial
                                                          : telemetry::UtilSource::samples;
                NvmlDiagnostics& d = state.diagnostics;
                d.junk_util_samples += fold.junk;
                d.lost_sample_batches += fold.lost_samples ? 1 : 0;
                d.unmeasured_us += fold.unmeasured_us;
                return;
            }
        } else if (unsupported(rc)) {
            card.samples_supported = false;
        } else {
            status.ok(rc);
            if (span) {
                card.util.skip(*span);
            }
            unmeasured(span, poll);
            return;
        }
    }
    poll.util.clear();
    if (snapshot) {
        poll.util.push_back({*snapshot, std::max<DurationUs>(span.value_or(1), 1)});
        poll.util_source = telemetry::UtilSource::snapshot;
    } else if (!unsupported(rates_rc)) {
        unmeasured(span, poll); // the card has utilization, but its reading failed
    }
}

void read_memory(const Library& lib, const Card& card, Status& status,
                 telemetry::DevicePoll& poll) {
    telemetry::CardReadings& r = poll.readings;
    if (lib.variant(Entry::device_get_memory_info) == 0) {
        nvmlMemory_v2_t memory{};
        memory.version = nvmlMemory_v2;
        if (status.ok(lib.call<Entry::device_get_memory_info>(card.handle, &memory))) {
            r.mem_used_mib = bytes_to_mib(memory.used); // _v2: without the reserved memory
            r.mem_total_mib = bytes_to_mib(memory.total);
            r.mem_reserved_mib = bytes_to_mib(memory.reserved);
        }
        return;
    }
    nvmlMemory_t memory{}; // v1: used includes the reserved memory, which it does not give
    if (status.ok(lib.call<Entry::device_get_memory_info>(card.handle, &memory))) {
        r.mem_used_mib = bytes_to_mib(memory.used);
        r.mem_total_mib = bytes_to_mib(memory.total);
    }
}

telemetry::ProcessType process_type(ListKind kind) {
    switch (kind) {
    case ListKind::graphics:
        return telemetry::ProcessType::graphics;
    case ListKind::mps:
        return telemetry::ProcessType::mps;
    case ListKind::compute:
        break;
    }
    return telemetry::ProcessType::compute;
}

template <Entry E>
void read_list(const Library& lib, Card& card, ListKind kind, SourceState& state, Status& status,
               telemetry::DevicePoll& poll) {
    std::size_t& stride = state.process_stride[static_cast<std::size_t>(kind)];
    ProcessListBuffer& buffer = state.buffers.list;
    const nvmlReturn_t rc = read_process_list(
        [&](unsigned int* count, void* infos) { return lib.call<E>(card.handle, count, infos); },
        stride, card.memory_total_bytes, card.list_capacity[static_cast<std::size_t>(kind)],
        buffer);
    if (rc != NVML_SUCCESS) {
        // A list that failed for another reason than "not supported" leaves the holders unknown.
        poll.processes_unknown = poll.processes_unknown || !unsupported(rc);
        status.ok(rc);
        return;
    }
    if (buffer.list.stride != 0 && buffer.list.stride != stride) {
        stride = buffer.list.stride;
        ++state.diagnostics.stride_corrections;
    }
    state.diagnostics.dropped_process_entries += buffer.list.dropped;
    merge_duplicate_pids(buffer.list.processes);
    for (const RawProcess& p : buffer.list.processes) {
        telemetry::ProcessReading reading;
        reading.pid = p.pid;
        reading.type = process_type(kind);
        if (p.used_bytes) {
            reading.mem_used_mib = bytes_to_mib(*p.used_bytes);
        }
        poll.processes.push_back(reading);
    }
}

/// Reads per-process samples after `cursor` into `buffers.process_entries`; NOT_FOUND and empty
/// replies are "no samples". A known `capacity` skips the size query.
nvmlReturn_t read_process_samples(const Library& lib, nvmlDevice_t h, std::uint64_t cursor,
                                  unsigned int& capacity, PollBuffers& buffers) {
    std::vector<ProcessUtilEntry>& out = buffers.process_entries;
    out.clear();
    unsigned int count = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    if (capacity == 0) {
        rc = lib.call<Entry::device_get_process_utilization>(h, nullptr, &count, cursor);
    }
    for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 3; ++attempt) {
        const unsigned int offered =
            attempt == 0 && capacity != 0
                ? capacity
                : std::min(count, k_max_process_samples) + k_sample_headroom;
        buffers.process_samples.resize(offered);
        count = offered;
        rc = lib.call<Entry::device_get_process_utilization>(h, buffers.process_samples.data(),
                                                             &count, cursor);
        if (rc == NVML_SUCCESS) {
            capacity = offered;
            const std::size_t written = std::min(count, offered);
            for (std::size_t i = 0; i < written; ++i) {
                const nvmlProcessUtilizationSample_t& s = buffers.process_samples[i];
                out.push_back({s.pid, s.timeStamp, s.smUtil});
            }
        }
    }
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) {
        capacity = 0;
    }
    return rc == NVML_ERROR_NOT_FOUND ? NVML_SUCCESS : rc;
}

void read_process_utilization(const Library& lib, Card& card, SourceState& state, Status& status,
                              telemetry::DevicePoll& poll) {
    PollBuffers& buffers = state.buffers;
    const bool priming = !card.process_util.primed() || !card.last_poll;
    const nvmlReturn_t rc =
        read_process_samples(lib, card.handle, priming ? 0 : card.process_util.cursor_us(),
                             card.process_sample_capacity, buffers);
    if (rc != NVML_SUCCESS) {
        // A failed read (not "not supported") leaves who was active unknown, never split by
        // memory as if measured.
        poll.process_util_unknown = !unsupported(rc);
        status.ok(rc);
        return;
    }
    if (priming) {
        card.process_util.prime(buffers.process_entries);
        return;
    }
    buffers.pids.clear();
    for (const auto& p : poll.processes) {
        buffers.pids.push_back(p.pid);
    }
    PidUtils& util = buffers.pid_utils;
    card.process_util.fold(buffers.process_entries, buffers.pids,
                           state.diagnostics.junk_process_samples,
                           state.diagnostics.unlisted_process_samples, util);
    // A pid in several lists gets its SM share once: compute first, then MPS, then graphics.
    for (const auto type : {telemetry::ProcessType::compute, telemetry::ProcessType::mps,
                            telemetry::ProcessType::graphics}) {
        for (auto& p : poll.processes) {
            if (p.type == type) {
                p.sm_util_pct = util.take(p.pid);
            }
        }
    }
}

/// The readings that only nvmlDeviceGetFieldValues gives (memory temperature), the memory and
/// PCIe health counters, the row remapper's failure flag and the NVLink error totals over all
/// links, in one call; each value has its own return code.
void read_field_values(const Library& lib, const Card& card, Status& status,
                       telemetry::CardReadings& r) {
    struct Wanted {
        nvmlFieldId_t id;
        std::optional<std::int64_t> telemetry::CardReadings::*reading;
    };
    static constexpr std::array<Wanted, 10> k_wanted{{
        {NVML_FI_DEV_MEMORY_TEMP, &telemetry::CardReadings::mem_temperature_c},
        {NVML_FI_DEV_ECC_DBE_VOL_TOTAL, &telemetry::CardReadings::ecc_uncorrected},
        {NVML_FI_DEV_REMAPPED_COR, &telemetry::CardReadings::remapped_rows_cor},
        {NVML_FI_DEV_REMAPPED_UNC, &telemetry::CardReadings::remapped_rows_unc},
        {NVML_FI_DEV_REMAPPED_PENDING, &telemetry::CardReadings::remap_pending},
        {NVML_FI_DEV_PCIE_REPLAY_COUNTER, &telemetry::CardReadings::pcie_replays},
        {NVML_FI_DEV_REMAPPED_FAILURE, &telemetry::CardReadings::remap_failure},
        {NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, &telemetry::CardReadings::nvlink_replays},
        {NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
         &telemetry::CardReadings::nvlink_recoveries},
        {NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL,
         &telemetry::CardReadings::nvlink_crc_errors},
    }};
    std::array<nvmlFieldValue_t, k_wanted.size()> values{};
    for (std::size_t i = 0; i < k_wanted.size(); ++i) {
        values[i].fieldId = k_wanted[i].id;
    }
    if (!status.ok(lib.call<Entry::device_get_field_values>(
            card.handle, static_cast<int>(values.size()), values.data()))) {
        return;
    }
    for (std::size_t i = 0; i < k_wanted.size(); ++i) {
        const nvmlFieldValue_t& v = values[i];
        // A value for another field than asked (a confused driver) is left out.
        if (v.fieldId == k_wanted[i].id && status.ok(v.nvmlReturn)) {
            r.*k_wanted[i].reading = integer_of(v.valueType, v.value);
        }
    }
}

/// Power draw and enforced limit. A reading no card can give (a negative value the driver
/// returned as a huge unsigned one, or far above the card's limit) is junk: dropped and counted,
/// never stored or priced.
void read_power(const Library& lib, const Card& card, Status& status, telemetry::DevicePoll& poll,
                int& junk) {
    unsigned int value = 0;
    if (status.ok(lib.call<Entry::device_get_enforced_power_limit>(card.handle, &value))) {
        if (value > 0 && value <= k_max_card_power_mw) {
            poll.readings.power_limit_mw = value;
        } else {
            ++junk;
        }
    }
    if (status.ok(lib.call<Entry::device_get_power_usage>(card.handle, &value))) {
        const std::int64_t bound =
            poll.readings.power_limit_mw
                ? std::min<std::int64_t>(*poll.readings.power_limit_mw * k_power_over_limit,
                                         k_max_card_power_mw)
                : k_max_card_power_mw;
        if (value <= bound) {
            poll.readings.power_mw = value;
        } else {
            ++junk;
        }
    }
}

void read_sensors(const Library& lib, Card& card, TimeUs now, Status& status, SourceState& state,
                  telemetry::DevicePoll& poll) {
    unsigned int value = 0;
    unsigned long long wide = 0;
    read_power(lib, card, status, poll, state.diagnostics.junk_power_readings);
    if (status.ok(lib.call<Entry::device_get_total_energy_consumption>(card.handle, &wide)) &&
        wide <= static_cast<unsigned long long>(INT64_MAX)) {
        poll.readings.energy_mj = static_cast<std::int64_t>(wide);
    }
    nvmlTemperature_v1_t temperature{nvmlTemperature_v1, NVML_TEMPERATURE_GPU, 0};
    const nvmlReturn_t rc = lib.call<Entry::device_get_temperature_v>(card.handle, &temperature);
    if (rc == NVML_SUCCESS) {
        poll.readings.temperature_c = temperature.temperature;
    } else if (unsupported(rc) || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
        if (status.ok(lib.call<Entry::device_get_temperature>(card.handle, NVML_TEMPERATURE_GPU,
                                                              &value))) {
            poll.readings.temperature_c = value;
        }
    } else {
        status.ok(rc);
    }
    if (status.ok(lib.call<Entry::device_get_clock_info>(card.handle, NVML_CLOCK_SM, &value))) {
        poll.readings.sm_clock_mhz = value;
    }
    if (status.ok(lib.call<Entry::device_get_max_clock_info>(card.handle, NVML_CLOCK_SM, &value))) {
        poll.readings.max_sm_clock_mhz = value;
    }
    if (status.ok(lib.call<Entry::device_get_clocks_event_reasons>(card.handle, &wide))) {
        poll.readings.clock_events = static_cast<std::int64_t>(wide & 0x7FFFFFFFFFFFFFFFULL);
    }
    read_field_values(lib, card, status, poll.readings);
    const bool busy = !poll.util.empty() && poll.util.back().pct > 0;
    read_bus(lib, card, now, busy, poll.readings);
}

} // namespace

void clear_poll(const Card& card, telemetry::DevicePoll& poll) {
    // Every field back to its default (whatever fields DevicePoll gains), keeping the storage of
    // the uuid and the two lists.
    telemetry::DevicePoll fresh;
    fresh.uuid = std::move(poll.uuid);
    fresh.util = std::move(poll.util);
    fresh.processes = std::move(poll.processes);
    poll = std::move(fresh);
    poll.uuid = card.info.uuid;
    poll.util.clear();
    poll.processes.clear();
}

std::int64_t bytes_to_mib(std::uint64_t bytes) {
    return static_cast<std::int64_t>((bytes + k_bytes_per_mib / 2) / k_bytes_per_mib);
}

nvmlReturn_t read_uuid(const Library& library, nvmlDevice_t handle, std::string& uuid) {
    char buffer[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    const nvmlReturn_t rc =
        library.call<Entry::device_get_uuid>(handle, &buffer[0], NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    buffer[sizeof(buffer) - 1] = '\0';
    if (rc == NVML_SUCCESS) {
        uuid = buffer;
    }
    return rc;
}

void read_card(const Library& library, Card& card, TimeUs now, SourceState& state,
               telemetry::DevicePoll& poll) {
    clear_poll(card, poll);
    Status status;
    const bool mig = card.mig_slot.has_value();
    if (!mig) {
        read_utilization(library, card, now, state, status, poll);
    }
    read_memory(library, card, status, poll);
    read_list<Entry::device_get_compute_running_processes>(library, card, ListKind::compute, state,
                                                           status, poll);
    read_list<Entry::device_get_graphics_running_processes>(library, card, ListKind::graphics,
                                                            state, status, poll);
    read_list<Entry::device_get_mps_compute_running_processes>(library, card, ListKind::mps, state,
                                                               status, poll);
    if (!mig && !status.lost()) {
        read_process_utilization(library, card, state, status, poll);
        read_sensors(library, card, now, status, state, poll);
    }
    card.last_poll = now;
    if (status.lost()) {
        card.lost = true;
        clear_poll(card, poll);
        poll.lost = true;
        return;
    }
    poll.read_errors = status.errors();
}

} // namespace gua::nvml

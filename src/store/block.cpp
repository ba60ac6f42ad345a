// SPDX-License-Identifier: Apache-2.0
// Encoding of ticks into the open block of a writer.
#include "store/block.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gua::store {

namespace {

constexpr bool energy_in_joules() {
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.base == telemetry::StoredBase::energy && f.quantum != 1000) {
            return false;
        }
    }
    return telemetry::info(k_power_field).quantum == 1000;
}
static_assert(energy_in_joules(), "StoredBase::energy pairs watts × µs with joules");

constexpr std::size_t k_max_digits = 20; // of a signed 64-bit integer with its sign

template <typename T> std::uint64_t non_negative(const std::optional<T>& v) {
    if (!v) {
        return codec::k_null;
    }
    return static_cast<std::uint64_t>(std::max<std::int64_t>(static_cast<std::int64_t>(*v), 0));
}

std::uint64_t rounded(const std::optional<double>& v, double scale) {
    if (!v || !std::isfinite(*v)) {
        return codec::k_null;
    }
    return static_cast<std::uint64_t>(std::max<long long>(std::llround(*v * scale), 0));
}

/// Shape code of a card-tick: null when unmeasured, 0–7 when one bucket holds the whole tick and
/// active time is 0 or all of it (bucket + 4 when active), else k_shape_partial when active time
/// and bucket 3 follow from buckets 0–2, else k_shape_explicit.
std::uint64_t shape_of(const telemetry::CardTickRecord& c, DurationUs duration_us) {
    const auto& b = c.bucket_us;
    if (!c.active_us) {
        return std::all_of(b.begin(), b.end(), [](DurationUs x) { return x == 0; })
                   ? codec::k_null
                   : k_shape_explicit;
    }
    const DurationUs a = *c.active_us;
    if (a != 0 && a != duration_us) {
        return a == duration_us - b[0] && b[3] == duration_us - b[0] - b[1] - b[2]
                   ? k_shape_partial
                   : k_shape_explicit;
    }
    for (std::size_t i = 0; i < b.size(); ++i) {
        bool one_hot = b[i] == duration_us;
        for (std::size_t j = 0; j < b.size() && one_hot; ++j) {
            one_hot = j == i || b[j] == 0;
        }
        if (one_hot) {
            return i + (a == duration_us && duration_us != 0 ? 4 : 0);
        }
    }
    return a == duration_us - b[0] && b[3] == duration_us - b[0] - b[1] - b[2] ? k_shape_partial
                                                                               : k_shape_explicit;
}

} // namespace

DurationUs idle_unlisted_default(bool slot_has_processes, std::optional<DurationUs> active_us,
                                 DurationUs measured_us, DurationUs idle_unknown_us) {
    if (slot_has_processes || !active_us) {
        return 0;
    }
    return std::max<DurationUs>(measured_us - *active_us - idle_unknown_us, 0);
}

DurationUs proc_active_default(std::optional<DurationUs> card_active_us,
                               std::optional<std::uint64_t> sm_cpct, std::uint64_t slot_sm_cpct) {
    // Bounds keep the product exact in 64 bits, as in the views' SQL.
    constexpr DurationUs k_max_active = DurationUs{1} << 40;
    constexpr std::uint64_t k_max_sum = std::uint64_t{1} << 20;
    if (!card_active_us || !sm_cpct || *card_active_us <= 0 || *card_active_us > k_max_active ||
        slot_sm_cpct == 0 || slot_sm_cpct > k_max_sum || *sm_cpct > slot_sm_cpct) {
        return 0;
    }
    return *card_active_us * static_cast<DurationUs>(*sm_cpct) /
           static_cast<DurationUs>(slot_sm_cpct);
}

DurationUs proc_idle_held_default(DurationUs card_held_us, std::optional<std::uint64_t> mem_mib,
                                  std::uint64_t slot_mem_mib) {
    // Bounds keep the product exact in 64 bits.
    constexpr DurationUs k_max_held = DurationUs{1} << 40;
    constexpr std::uint64_t k_max_sum = std::uint64_t{1} << 22;
    if (!mem_mib || card_held_us <= 0 || card_held_us > k_max_held || slot_mem_mib == 0 ||
        slot_mem_mib > k_max_sum || *mem_mib > slot_mem_mib) {
        return 0;
    }
    return card_held_us * static_cast<DurationUs>(*mem_mib) / static_cast<DurationUs>(slot_mem_mib);
}

DurationUs card_held_of(std::optional<DurationUs> active_us, DurationUs measured_us,
                        DurationUs idle_unknown_us, DurationUs idle_unlisted_us) {
    if (!active_us) {
        return 0;
    }
    return std::max<DurationUs>(measured_us - *active_us - idle_unknown_us - idle_unlisted_us, 0);
}

telemetry::AllocationTimes allocation_whole(bool allocated, DurationUs duration_us,
                                            std::optional<DurationUs> active_us,
                                            DurationUs measured_us, DurationUs idle_unknown_us,
                                            DurationUs idle_unlisted_us) {
    telemetry::AllocationTimes a;
    if (allocated) {
        a.allocated_us = duration_us;
        a.active_us = active_us.value_or(0);
        a.idle_held_us = card_held_of(active_us, measured_us, idle_unknown_us, idle_unlisted_us);
        a.unused_us = idle_unlisted_us;
    } else {
        a.unknown_us = duration_us;
        a.unknown_idle_us = idle_unlisted_us;
    }
    return a;
}

std::int64_t quantised(std::int64_t value, std::int64_t quantum) {
    if (quantum <= 1) {
        return value;
    }
    // Round half away from zero, as std::llround(value / quantum) would.
    const std::int64_t half = quantum / 2;
    return value >= 0 ? (value + half) / quantum : -((-value + half) / quantum);
}

std::int64_t stored_base(telemetry::StoredBase base, std::uint64_t base_bit,
                         std::uint64_t power_stored, std::uint64_t events_stored,
                         DurationUs duration_us) {
    constexpr std::uint64_t k_max_power = std::uint64_t{1} << 20; // keeps the product in 64 bits
    constexpr DurationUs k_max_duration = DurationUs{1} << 40;
    if (duration_us <= 0 || duration_us > k_max_duration) {
        return 0;
    }
    switch (base) {
    case telemetry::StoredBase::none:
        return 0;
    case telemetry::StoredBase::energy:
        if (power_stored == codec::k_null || power_stored > k_max_power) {
            return 0;
        }
        return (static_cast<std::int64_t>(power_stored) * duration_us + 500000) / 1000000;
    case telemetry::StoredBase::clock_event:
        return events_stored != codec::k_null && (events_stored & base_bit) != 0 ? duration_us : 0;
    }
    return 0;
}

std::size_t period_of(std::size_t stream, std::size_t cards, std::size_t procs) {
    switch (static_cast<Stream>(stream)) {
    case Stream::t0_delta:
    case Stream::dur_delta:
    case Stream::shape_us:
    case Stream::alloc_us:
        return 1;
    case Stream::proc_mem_mib:
    case Stream::proc_sm_cpct:
    case Stream::proc_active_us:
    case Stream::proc_idle_held_us:
        return procs;
    default:
        return cards;
    }
}

std::int64_t hour_of(TimeUs t) {
    return t / k_us_per_hour - (t % k_us_per_hour < 0 ? 1 : 0);
}

namespace {

/// The allocation streams (alloc_shape, alloc_us) count towards BlockBuilder::k_max_bytes only
/// beyond this many bytes: a block where an allocation starts or ends on a card (a slot that keeps
/// every code, six times for the edge tick) then closes where it would without allocations
/// instead of a few ticks earlier, which made 3 % more blocks, each repeating its layout and
/// constant streams. Such a block still fits a 4 kB page; a block whose allocations change
/// often (many cards, many edges) still closes at k_max_bytes.
constexpr std::size_t k_allocation_allowance = 128;

} // namespace

bool BlockBuilder::fits(const BlockLayout& layout, TimeUs t0) const {
    if (empty() || hour_of(t0) != m_hour || m_row.n_ticks >= k_max_block_ticks ||
        layout != m_layout) {
        return false;
    }
    const std::size_t layout_bytes = m_row.cards.size() + m_row.procs.size();
    std::size_t bytes = layout_bytes > k_max_bytes / 2 ? 0 : layout_bytes;
    std::size_t allocation_bytes = 0;
    for (std::size_t s = 0; s < k_stream_count; ++s) {
        const bool allocation = s == static_cast<std::size_t>(Stream::alloc_shape) ||
                                s == static_cast<std::size_t>(Stream::alloc_us);
        (allocation ? allocation_bytes : bytes) += stream(s).size();
    }
    if (allocation_bytes > k_allocation_allowance) {
        bytes += allocation_bytes - k_allocation_allowance;
    }
    return bytes < k_max_bytes;
}

const std::string& BlockBuilder::stream(std::size_t s) const {
    static const std::string k_empty;
    if (s == static_cast<std::size_t>(Stream::alloc_shape) && !m_any_allocation) {
        return k_empty;
    }
    return m_streams[s].text();
}

void BlockBuilder::start(std::int64_t run_id, const BlockLayout& layout,
                         const telemetry::Tick& tick) {
    m_layout = layout;
    m_any_allocation = false;
    m_hour = hour_of(tick.t0);
    m_row = BlockRow{};
    m_row.run_id = run_id;
    m_row.t0_us = tick.t0;
    m_row.end_us = tick.t0 + tick.duration_us;
    m_row.tick_us = tick.duration_us;
    m_row.cards = fmt::format("[{}]", fmt::join(layout.gpus, ","));
    // [[slot,process id,type],...] with to_chars: a block of many processes starts often.
    std::string& procs = m_row.procs;
    procs.resize(2 + layout.procs.size() * (3 * k_max_digits + 5));
    char* out = procs.data();
    char* const end = procs.data() + procs.size();
    *out++ = '[';
    for (const BlockLayout::Proc& p : layout.procs) {
        if (out[-1] == ']') {
            *out++ = ',';
        }
        *out++ = '[';
        out = std::to_chars(out, end, p.slot).ptr;
        *out++ = ',';
        out = std::to_chars(out, end, p.process_id).ptr;
        *out++ = ',';
        out = std::to_chars(out, end, p.type).ptr;
        *out++ = ']';
    }
    *out++ = ']';
    procs.resize(static_cast<std::size_t>(out - procs.data()));
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        m_streams[i].clear(period_of(i, layout.gpus.size(), layout.procs.size()));
    }
    m_last_end = tick.t0;
    encode(tick);
}

void BlockBuilder::append(const telemetry::Tick& tick) {
    encode(tick);
}

std::uint64_t stored_value(const telemetry::CardFieldInfo& f,
                           const telemetry::CardReadings& readings, DurationUs duration_us) {
    const std::optional<std::int64_t>& v = readings.*f.value;
    if (!v) {
        return codec::k_null;
    }
    const std::int64_t q = quantised(*v, f.quantum);
    if (f.base == telemetry::StoredBase::none) {
        return static_cast<std::uint64_t>(std::max<std::int64_t>(q, 0));
    }
    const auto plain = [&](telemetry::CardField field) {
        return stored_value(telemetry::info(field), readings, duration_us);
    };
    return codec::zigzag(q - stored_base(f.base, f.base_bit, plain(k_power_field),
                                         plain(k_events_field), duration_us));
}

void BlockBuilder::encode_fields(const telemetry::CardReadings& readings, DurationUs duration_us) {
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        m_streams[f.stream].append(stored_value(f, readings, duration_us));
    }
}

void BlockBuilder::encode_allocation(const telemetry::CardTickRecord& c, DurationUs duration_us,
                                     DurationUs measured_us, DurationUs idle_unknown_us) {
    const telemetry::AllocationTimes& a = c.allocation;
    std::uint64_t code = k_alloc_explicit;
    if (!a.any()) {
        code = k_alloc_none;
    } else if (a == allocation_whole(true, duration_us, c.active_us, measured_us, idle_unknown_us,
                                     c.idle_unlisted_us)) {
        code = k_alloc_allocated;
    } else if (a == allocation_whole(false, duration_us, c.active_us, measured_us, idle_unknown_us,
                                     c.idle_unlisted_us)) {
        code = k_alloc_unknown;
    }
    m_streams[static_cast<std::size_t>(Stream::alloc_shape)].append(code);
    m_any_allocation = m_any_allocation || code != k_alloc_none;
    if (code == k_alloc_explicit) {
        for (const DurationUs v : {a.allocated_us, a.active_us, a.idle_held_us, a.unused_us,
                                   a.unknown_us, a.unknown_idle_us}) {
            m_streams[static_cast<std::size_t>(Stream::alloc_us)].append(
                static_cast<std::uint64_t>(std::max<DurationUs>(v, 0)));
        }
    }
}

void BlockBuilder::encode(const telemetry::Tick& tick) {
    const auto put = [this](Stream s, std::uint64_t v) {
        m_streams[static_cast<std::size_t>(s)].append(v);
    };
    put(Stream::t0_delta, codec::zigzag(tick.t0 - m_last_end));
    put(Stream::dur_delta, codec::zigzag(tick.duration_us - m_row.tick_us));
    for (const telemetry::CardTickRecord& c : tick.cards) {
        put(Stream::util_source, static_cast<std::uint64_t>(c.util_source));
        put(Stream::util_cpct, rounded(c.util_pct, 100.0));
        const DurationUs unmeasured = std::max<DurationUs>(c.unmeasured_us, 0);
        const DurationUs idle_unknown = std::max<DurationUs>(c.idle_unknown_us, 0);
        const DurationUs measured = tick.duration_us - unmeasured;
        put(Stream::unmeasured_us, static_cast<std::uint64_t>(unmeasured));
        put(Stream::idle_unknown_us, static_cast<std::uint64_t>(idle_unknown));
        put(Stream::idle_unlisted_us,
            codec::zigzag(c.idle_unlisted_us - idle_unlisted_default(!c.processes.empty(),
                                                                     c.active_us, measured,
                                                                     idle_unknown)));
        const std::uint64_t shape = shape_of(c, measured);
        put(Stream::shape, shape);
        if (shape == k_shape_partial) {
            for (std::size_t b = 0; b < 3; ++b) {
                put(Stream::shape_us, codec::zigzag(c.bucket_us[b]));
            }
        } else if (shape == k_shape_explicit) {
            put(Stream::shape_us, c.active_us ? codec::zigzag(*c.active_us) : codec::k_null);
            for (DurationUs b : c.bucket_us) {
                put(Stream::shape_us, codec::zigzag(b));
            }
        }
        encode_allocation(c, tick.duration_us, measured, idle_unknown);
        encode_fields(c.readings, tick.duration_us);
        put(Stream::read_errors, static_cast<std::uint64_t>(std::max(c.read_errors, 0)));
        std::uint64_t slot_sm = 0;
        for (const telemetry::ProcessTick& p : c.processes) {
            const std::uint64_t sm = rounded(p.sm_util_pct, 100.0);
            constexpr std::uint64_t k_cap = std::uint64_t{1} << 40; // saturates: see the default
            slot_sm = std::min(slot_sm + (sm == codec::k_null ? 0 : std::min(sm, k_cap)), k_cap);
        }
        std::uint64_t slot_mem = 0;
        for (const telemetry::ProcessTick& p : c.processes) {
            const std::uint64_t mem = non_negative(p.mem_used_mib);
            constexpr std::uint64_t k_cap = std::uint64_t{1} << 40; // saturates: see the default
            slot_mem =
                std::min(slot_mem + (mem == codec::k_null ? 0 : std::min(mem, k_cap)), k_cap);
        }
        const DurationUs card_held =
            card_held_of(c.active_us, measured, idle_unknown, c.idle_unlisted_us);
        for (const telemetry::ProcessTick& p : c.processes) {
            const std::uint64_t sm = rounded(p.sm_util_pct, 100.0);
            const std::uint64_t mem = non_negative(p.mem_used_mib);
            put(Stream::proc_idle_held_us,
                p.idle_held_us
                    ? codec::zigzag(*p.idle_held_us -
                                    proc_idle_held_default(
                                        card_held,
                                        mem == codec::k_null ? std::nullopt : std::optional(mem),
                                        slot_mem))
                    : codec::k_null);
            put(Stream::proc_mem_mib, non_negative(p.mem_used_mib));
            put(Stream::proc_sm_cpct, sm);
            put(Stream::proc_active_us,
                p.active_us
                    ? codec::zigzag(*p.active_us - proc_active_default(c.active_us,
                                                                       sm == codec::k_null
                                                                           ? std::nullopt
                                                                           : std::optional(sm),
                                                                       slot_sm))
                    : codec::k_null);
        }
    }
    ++m_row.n_ticks;
    m_last_end = tick.t0 + tick.duration_us;
    m_row.end_us = std::max(m_row.end_us, m_last_end);
}

} // namespace gua::store

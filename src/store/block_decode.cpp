// SPDX-License-Identifier: Apache-2.0
// Decoding of tick blocks back into card-ticks (the inverse of BlockBuilder). Every count is
// checked against the block's limits and the stream texts before anything is allocated for it.
#include "store/block.hpp"

#include <nlohmann/json.hpp>

namespace gua::store {

namespace {

std::optional<std::int64_t> opt(std::uint64_t v) {
    if (v == codec::k_null) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(v);
}

bool parse_layout(const BlockRow& row, BlockLayout& layout) {
    const nlohmann::json cards = nlohmann::json::parse(row.cards, nullptr, false);
    const nlohmann::json procs = nlohmann::json::parse(row.procs, nullptr, false);
    if (!cards.is_array() || !procs.is_array() || cards.size() > k_max_block_cards) {
        return false;
    }
    for (const nlohmann::json& c : cards) {
        if (!c.is_number_integer()) {
            return false;
        }
        layout.gpus.push_back(c.get<std::int64_t>());
    }
    for (const nlohmann::json& p : procs) {
        if (!p.is_array() || p.size() != 3 || !p[0].is_number_integer() ||
            !p[1].is_number_integer() || !p[2].is_number_integer()) {
            return false;
        }
        const std::int64_t slot = p[0].get<std::int64_t>();
        if (slot < 0 || slot >= static_cast<std::int64_t>(layout.gpus.size())) {
            return false;
        }
        layout.procs.push_back(
            BlockLayout::Proc{slot, p[1].get<std::int64_t>(), p[2].get<std::int64_t>()});
    }
    return true;
}

/// Whether stream number `s` may be missing from a block (written before the stream existed).
constexpr std::array<bool, k_stream_count> k_may_be_absent = [] {
    std::array<bool, k_stream_count> absent{};
    for (std::size_t s = static_cast<std::size_t>(Stream::unmeasured_us);
         s <= static_cast<std::size_t>(Stream::proc_active_us); ++s) {
        absent[s] = true;
    }
    absent[static_cast<std::size_t>(Stream::proc_idle_held_us)] = true;
    absent[static_cast<std::size_t>(Stream::alloc_shape)] = true; // also: no allocation at all
    absent[static_cast<std::size_t>(Stream::alloc_us)] = true;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        absent[f.stream] = f.since > 3;
    }
    return absent;
}();

/// The value of stream `s` for a block written before the stream existed: NULL for per-process
/// active time and the per-card fields, else 0.
constexpr std::array<std::uint64_t, k_stream_count> k_absent_value = [] {
    std::array<std::uint64_t, k_stream_count> value{};
    value[static_cast<std::size_t>(Stream::proc_active_us)] = codec::k_null;
    value[static_cast<std::size_t>(Stream::proc_idle_held_us)] = codec::k_null;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        value[f.stream] = codec::k_null;
    }
    return value;
}();

bool is_absent(const BlockRow& row, std::size_t s) {
    return k_may_be_absent[s] && row.streams[s].empty();
}

bool is_absent(const BlockRow& row, Stream s) {
    return is_absent(row, static_cast<std::size_t>(s));
}

/// Largest magnitude of a time, duration or difference a block may hold: 2^53 µs (285 years).
/// Anything beyond is damage, and sums of such values could overflow 64 bits.
constexpr std::int64_t k_max_time_us = std::int64_t{1} << 53;

bool in_range(std::int64_t us) {
    return us >= -k_max_time_us && us <= k_max_time_us;
}

/// Sets the allocation crossing of `t` (its measurement decoded) from its alloc_shape `code`,
/// taking explicit values from `next`; false when damaged.
template <typename Next>
bool decode_allocation(std::uint64_t code, DurationUs measured, StoredCardTick& t, Next next) {
    switch (code) {
    case k_alloc_none:
        return true;
    case k_alloc_allocated:
    case k_alloc_unknown:
        t.allocation = allocation_whole(code == k_alloc_allocated, t.duration_us, t.active_us,
                                        measured, t.idle_unknown_us, t.idle_unlisted_us);
        return true;
    case k_alloc_explicit:
        for (DurationUs* v :
             {&t.allocation.allocated_us, &t.allocation.active_us, &t.allocation.idle_held_us,
              &t.allocation.unused_us, &t.allocation.unknown_us, &t.allocation.unknown_idle_us}) {
            const std::uint64_t stored = next();
            if (stored > static_cast<std::uint64_t>(k_max_time_us)) {
                return false;
            }
            *v = static_cast<DurationUs>(stored);
        }
        return true;
    default:
        return false;
    }
}

/// Appends the card-ticks of a block whose streams are decoded; false when they do not fit or
/// hold a time out of range (a per-card reading that cannot be scaled is left unknown).
bool expand(const BlockRow& row, const BlockLayout& layout,
            const std::array<codec::Values, k_stream_count>& v, DecodedTicks& out) {
    const auto n = static_cast<std::size_t>(row.n_ticks);
    const std::size_t cards = layout.gpus.size();
    const std::size_t procs = layout.procs.size();
    const auto val = [&](auto stream, std::size_t i) {
        const auto s = static_cast<std::size_t>(stream);
        return is_absent(row, s) ? k_absent_value[s] : v[s].at(i);
    };
    std::vector<std::vector<std::size_t>> slot_procs(cards);
    for (std::size_t j = 0; j < procs; ++j) {
        slot_procs[static_cast<std::size_t>(layout.procs[j].slot)].push_back(j);
    }
    std::size_t ex = 0;
    const auto shape_value = [&] { return codec::unzigzag(val(Stream::shape_us, ex++)); };
    std::size_t ax = 0; // next value of alloc_us
    TimeUs prev_end = row.t0_us;
    for (std::size_t k = 0; k < n; ++k) {
        const std::int64_t t0_delta = codec::unzigzag(val(Stream::t0_delta, k));
        const std::int64_t dur_delta = codec::unzigzag(val(Stream::dur_delta, k));
        if (!in_range(t0_delta) || !in_range(dur_delta)) {
            return false;
        }
        const TimeUs t0 = prev_end + t0_delta;
        const DurationUs duration = row.tick_us + dur_delta;
        prev_end = t0 + duration;
        if (!in_range(t0) || !in_range(duration) || !in_range(prev_end)) {
            return false;
        }
        for (std::size_t slot = 0; slot < cards; ++slot) {
            const std::size_t i = k * cards + slot;
            const auto at = [&](Stream s) { return val(s, i); };
            StoredCardTick t;
            t.t0 = t0;
            t.duration_us = duration;
            t.gpu_id = layout.gpus[slot];
            t.run_id = row.run_id;
            t.util_source = static_cast<telemetry::UtilSource>(at(Stream::util_source));
            if (const auto u = opt(at(Stream::util_cpct))) {
                t.util_pct = static_cast<double>(*u) / 100.0;
            }
            if (at(Stream::unmeasured_us) > k_max_time_us ||
                at(Stream::idle_unknown_us) > k_max_time_us) {
                return false;
            }
            t.unmeasured_us = static_cast<DurationUs>(at(Stream::unmeasured_us));
            t.idle_unknown_us = static_cast<DurationUs>(at(Stream::idle_unknown_us));
            const DurationUs measured = duration - t.unmeasured_us;
            const std::uint64_t shape = at(Stream::shape);
            if (shape == k_shape_partial) {
                DurationUs rest = measured;
                for (std::size_t b = 0; b < 3; ++b) {
                    t.bucket_us[b] = shape_value();
                    if (!in_range(t.bucket_us[b])) {
                        return false;
                    }
                    rest -= t.bucket_us[b];
                }
                t.bucket_us[3] = rest;
                t.active_us = measured - t.bucket_us[0];
            } else if (shape == k_shape_explicit) {
                const std::uint64_t active = val(Stream::shape_us, ex++);
                if (active != codec::k_null) {
                    t.active_us = codec::unzigzag(active);
                    if (!in_range(*t.active_us)) {
                        return false;
                    }
                }
                for (std::size_t b = 0; b < 4; ++b) {
                    t.bucket_us[b] = shape_value();
                    if (!in_range(t.bucket_us[b])) {
                        return false;
                    }
                }
            } else if (shape != codec::k_null) {
                if (shape > 7) {
                    return false;
                }
                t.active_us = (shape & 4) != 0 ? measured : 0;
                t.bucket_us[shape & 3] = measured;
            }
            if (!is_absent(row, Stream::idle_unlisted_us)) {
                if (!in_range(codec::unzigzag(at(Stream::idle_unlisted_us)))) {
                    return false;
                }
                t.idle_unlisted_us = codec::unzigzag(at(Stream::idle_unlisted_us)) +
                                     idle_unlisted_default(!slot_procs[slot].empty(), t.active_us,
                                                           measured, t.idle_unknown_us);
            }
            if (!decode_allocation(at(Stream::alloc_shape), measured, t,
                                   [&] { return val(Stream::alloc_us, ax++); })) {
                return false;
            }
            for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
                const std::uint64_t stored = val(f.stream, i);
                if (stored == codec::k_null) {
                    continue;
                }
                auto q = static_cast<std::int64_t>(stored);
                bool overflow = false;
                if (f.base != telemetry::StoredBase::none) {
                    overflow = __builtin_add_overflow(
                        codec::unzigzag(stored),
                        stored_base(f.base, f.base_bit, val(stream_of(k_power_field), i),
                                    val(stream_of(k_events_field), i), duration),
                        &q);
                }
                std::int64_t value = 0;
                if (!overflow && !__builtin_mul_overflow(q, f.quantum, &value)) {
                    t.readings.*f.value = value; // else damaged: left unknown
                }
            }
            t.read_errors = opt(at(Stream::read_errors)).value_or(0);
            t.proc_begin = static_cast<std::uint32_t>(out.procs.size());
            std::uint64_t slot_sm = 0;
            for (std::size_t j : slot_procs[slot]) {
                constexpr std::uint64_t k_cap = std::uint64_t{1} << 40; // as BlockBuilder
                const std::uint64_t sm = val(Stream::proc_sm_cpct, k * procs + j);
                slot_sm =
                    std::min(slot_sm + (sm == codec::k_null ? 0 : std::min(sm, k_cap)), k_cap);
            }
            std::uint64_t slot_mem = 0;
            for (std::size_t j : slot_procs[slot]) {
                constexpr std::uint64_t k_cap = std::uint64_t{1} << 40; // as BlockBuilder
                const std::uint64_t mem = val(Stream::proc_mem_mib, k * procs + j);
                slot_mem =
                    std::min(slot_mem + (mem == codec::k_null ? 0 : std::min(mem, k_cap)), k_cap);
            }
            const DurationUs card_held =
                card_held_of(t.active_us, measured, t.idle_unknown_us, t.idle_unlisted_us);
            for (std::size_t j : slot_procs[slot]) {
                const std::size_t pi = k * procs + j;
                StoredProc p;
                p.process_id = layout.procs[j].process_id;
                p.type = static_cast<telemetry::ProcessType>(layout.procs[j].type);
                p.mem_used_mib = opt(val(Stream::proc_mem_mib, pi));
                const std::uint64_t sm = val(Stream::proc_sm_cpct, pi);
                if (sm != codec::k_null) {
                    p.sm_util_pct = static_cast<double>(sm) / 100.0;
                }
                const std::uint64_t active = val(Stream::proc_active_us, pi);
                if (active != codec::k_null) {
                    if (!in_range(codec::unzigzag(active))) {
                        return false;
                    }
                    p.active_us =
                        codec::unzigzag(active) +
                        proc_active_default(t.active_us,
                                            sm == codec::k_null ? std::nullopt : std::optional(sm),
                                            slot_sm);
                }
                const std::uint64_t held = val(Stream::proc_idle_held_us, pi);
                if (held != codec::k_null) {
                    if (!in_range(codec::unzigzag(held))) {
                        return false;
                    }
                    const std::uint64_t mem = val(Stream::proc_mem_mib, pi);
                    p.idle_held_us =
                        codec::unzigzag(held) +
                        proc_idle_held_default(
                            card_held, mem == codec::k_null ? std::nullopt : std::optional(mem),
                            slot_mem);
                }
                out.procs.push_back(p);
            }
            t.proc_count = static_cast<std::uint32_t>(out.procs.size()) - t.proc_begin;
            out.ticks.push_back(t);
        }
    }
    return true;
}

} // namespace

bool decode_block(const BlockRow& row, DecodedTicks& out) {
    BlockLayout layout;
    if (row.n_ticks < 0 || row.n_ticks > k_max_block_ticks || !in_range(row.t0_us) ||
        !in_range(row.tick_us) || !parse_layout(row, layout)) {
        return false;
    }
    const auto n = static_cast<std::size_t>(row.n_ticks);
    const std::size_t cards = layout.gpus.size();
    const std::size_t procs = layout.procs.size();
    std::array<codec::Values, k_stream_count> v;
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        if (is_absent(row, i)) {
            continue;
        }
        std::size_t count = n * period_of(i, cards, procs);
        if (i == static_cast<std::size_t>(Stream::shape_us)) {
            const codec::Values& shapes = v[static_cast<std::size_t>(Stream::shape)];
            count = 0;
            for (std::size_t k = 0; k < n * cards; ++k) {
                const std::uint64_t shape = shapes.at(k);
                count += shape == k_shape_partial ? 3 : (shape == k_shape_explicit ? 5 : 0);
            }
        }
        if (i == static_cast<std::size_t>(Stream::alloc_us)) {
            count = 0;
            if (!is_absent(row, Stream::alloc_shape)) {
                const codec::Values& codes = v[static_cast<std::size_t>(Stream::alloc_shape)];
                for (std::size_t k = 0; k < n * cards; ++k) {
                    count += codes.at(k) == k_alloc_explicit ? 6 : 0;
                }
            }
        }
        if (!codec::decode(row.streams[i], count, period_of(i, cards, procs), v[i])) {
            return false;
        }
    }
    // All or nothing: a block that fails half way leaves `out` as it was.
    const std::size_t ticks_before = out.ticks.size();
    const std::size_t procs_before = out.procs.size();
    if (!expand(row, layout, v, out)) {
        out.ticks.resize(ticks_before);
        out.procs.resize(procs_before);
        return false;
    }
    return true;
}

std::optional<TimeUs> earliest_tick_start(TimeUs t0_us, std::int64_t n_ticks, DurationUs tick_us,
                                          std::string_view t0_delta, std::string_view dur_delta) {
    if (n_ticks < 0 || n_ticks > k_max_block_ticks) {
        return std::nullopt;
    }
    const auto n = static_cast<std::size_t>(n_ticks);
    codec::Values starts;
    codec::Values durations;
    if (!codec::decode(t0_delta, n, 1, starts) || !codec::decode(dur_delta, n, 1, durations)) {
        return std::nullopt;
    }
    TimeUs earliest = t0_us;
    TimeUs prev_end = t0_us;
    for (std::size_t k = 0; k < n; ++k) { // as expand(); damaged values overflow nothing here
        TimeUs t0 = 0;
        TimeUs duration = 0;
        if (__builtin_add_overflow(prev_end, codec::unzigzag(starts.at(k)), &t0) ||
            __builtin_add_overflow(tick_us, codec::unzigzag(durations.at(k)), &duration) ||
            __builtin_add_overflow(t0, duration, &prev_end)) {
            return std::nullopt;
        }
        earliest = std::min(earliest, t0);
    }
    return earliest;
}

} // namespace gua::store

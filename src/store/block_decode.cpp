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

constexpr std::uint64_t k_sum_cap = std::uint64_t{1} << 40; // as BlockBuilder

/// Expands a block whose streams are decoded into card-ticks: one card-tick at a time, each
/// part of it (shape, readings, processes) by a function of its own. Every step returns false
/// when the block does not fit or holds a time out of range (a per-card reading that cannot be
/// scaled is left unknown).
class Expander {
  public:
    Expander(const BlockRow& row, const BlockLayout& layout,
             const std::vector<std::vector<std::size_t>>& slot_procs,
             const std::array<codec::Values, k_stream_count>& v,
             const std::vector<const telemetry::CardFieldInfo*>& fields, DecodedTicks& out)
        : m_row(row), m_layout(layout), m_v(v), m_fields(fields), m_out(out),
          m_slot_procs(slot_procs) {}

    /// Appends every card-tick of the block.
    bool run() {
        TimeUs prev_end = m_row.t0_us;
        for (std::size_t k = 0; k < static_cast<std::size_t>(m_row.n_ticks); ++k) {
            const std::int64_t t0_delta = codec::unzigzag(val(Stream::t0_delta, k));
            const std::int64_t dur_delta = codec::unzigzag(val(Stream::dur_delta, k));
            if (!in_range(t0_delta) || !in_range(dur_delta)) {
                return false;
            }
            const TimeUs t0 = prev_end + t0_delta;
            const DurationUs duration = m_row.tick_us + dur_delta;
            prev_end = t0 + duration;
            if (!in_range(t0) || !in_range(duration) || !in_range(prev_end)) {
                return false;
            }
            for (std::size_t slot = 0; slot < m_layout.gpus.size(); ++slot) {
                if (!card(k, slot, t0, duration)) {
                    return false;
                }
            }
        }
        return true;
    }

  private:
    std::uint64_t val(std::size_t stream, std::size_t i) const {
        return is_absent(m_row, stream) ? k_absent_value[stream] : m_v[stream].at(i);
    }
    std::uint64_t val(Stream stream, std::size_t i) const {
        return val(static_cast<std::size_t>(stream), i);
    }
    std::int64_t shape_value() { return codec::unzigzag(val(Stream::shape_us, m_ex++)); }

    /// Value `slot` of tick `k` of a stream with `slots` values per tick: what val() gives for
    /// value k * slots + slot, without its division (decoding reads ~50 values per card-tick).
    std::uint64_t cell(std::size_t stream, std::size_t k, std::size_t slot,
                       std::size_t slots) const {
        if (is_absent(m_row, stream)) {
            return k_absent_value[stream];
        }
        const codec::Values& x = m_v[stream];
        if (x.varying) {
            return x.kept[k * slots + slot];
        }
        if (x.slot_start.empty()) { // constant (period 1) or periodic (period = slots)
            return x.kept[x.period == 1 ? 0 : slot];
        }
        return x.kept[x.slot_start[slot] + x.slot_step[slot] * k];
    }
    std::uint64_t card_val(std::size_t stream, std::size_t k, std::size_t slot) const {
        return cell(stream, k, slot, m_layout.gpus.size());
    }
    std::uint64_t card_val(Stream stream, std::size_t k, std::size_t slot) const {
        return card_val(static_cast<std::size_t>(stream), k, slot);
    }
    std::uint64_t proc_val(Stream stream, std::size_t k, std::size_t j) const {
        return cell(static_cast<std::size_t>(stream), k, j, m_layout.procs.size());
    }

    /// Card-tick `slot` of tick `k`.
    bool card(std::size_t k, std::size_t slot, TimeUs t0, DurationUs duration) {
        // Built in place (a card-tick is large); a block that fails is cut off by the caller.
        StoredCardTick& t = m_out.ticks.emplace_back();
        t.t0 = t0;
        t.duration_us = duration;
        t.gpu_id = m_layout.gpus[slot];
        t.run_id = m_row.run_id;
        t.util_source = static_cast<telemetry::UtilSource>(card_val(Stream::util_source, k, slot));
        if (const auto u = opt(card_val(Stream::util_cpct, k, slot))) {
            t.util_pct = static_cast<double>(*u) / 100.0;
        }
        if (card_val(Stream::unmeasured_us, k, slot) > k_max_time_us ||
            card_val(Stream::idle_unknown_us, k, slot) > k_max_time_us) {
            return false;
        }
        t.unmeasured_us = static_cast<DurationUs>(card_val(Stream::unmeasured_us, k, slot));
        t.idle_unknown_us = static_cast<DurationUs>(card_val(Stream::idle_unknown_us, k, slot));
        const DurationUs measured = duration - t.unmeasured_us;
        if (!shape(card_val(Stream::shape, k, slot), measured, t)) {
            return false;
        }
        if (!is_absent(m_row, Stream::idle_unlisted_us)) {
            const std::int64_t stored =
                codec::unzigzag(card_val(Stream::idle_unlisted_us, k, slot));
            if (!in_range(stored)) {
                return false;
            }
            t.idle_unlisted_us =
                stored + idle_unlisted_default(!m_slot_procs[slot].empty(), t.active_us, measured,
                                               t.idle_unknown_us);
        }
        if (!decode_allocation(card_val(Stream::alloc_shape, k, slot), measured, t,
                               [&] { return val(Stream::alloc_us, m_ax++); })) {
            return false;
        }
        readings(k, slot, duration, t);
        t.read_errors = opt(card_val(Stream::read_errors, k, slot)).value_or(0);
        t.proc_begin = static_cast<std::uint32_t>(m_out.procs.size());
        if (!processes(k, slot, measured, t)) {
            return false;
        }
        t.proc_count = static_cast<std::uint32_t>(m_out.procs.size()) - t.proc_begin;
        return true;
    }

    /// The active time and the buckets of `t` from its shape code (and shape_us values).
    bool shape(std::uint64_t code, DurationUs measured, StoredCardTick& t) {
        if (code == k_shape_partial) {
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
        } else if (code == k_shape_explicit) {
            const std::uint64_t active = val(Stream::shape_us, m_ex++);
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
        } else if (code != codec::k_null) {
            if (code > 7) {
                return false;
            }
            t.active_us = (code & 4) != 0 ? measured : 0;
            t.bucket_us[code & 3] = measured;
        }
        return true;
    }

    /// The per-card fields (card_fields.def) of card-tick `i`; a damaged one is left unknown.
    void readings(std::size_t k, std::size_t slot, DurationUs duration, StoredCardTick& t) const {
        for (const telemetry::CardFieldInfo* field : m_fields) {
            const telemetry::CardFieldInfo& f = *field;
            const std::uint64_t stored = card_val(f.stream, k, slot);
            if (stored == codec::k_null) {
                continue;
            }
            auto q = static_cast<std::int64_t>(stored);
            bool overflow = false;
            if (f.base != telemetry::StoredBase::none) {
                overflow = __builtin_add_overflow(
                    codec::unzigzag(stored),
                    stored_base(f.base, f.base_bit, card_val(stream_of(k_power_field), k, slot),
                                card_val(stream_of(k_events_field), k, slot), duration),
                    &q);
            }
            std::int64_t value = 0;
            if (!overflow && !__builtin_mul_overflow(q, f.quantum, &value)) {
                t.readings.*f.value = value;
            }
        }
    }

    /// Σ of `stream` over the processes of `slot` in tick `k` (NULL as 0), capped as the writer
    /// caps it.
    std::uint64_t slot_sum(Stream stream, std::size_t k, std::size_t slot) const {
        std::uint64_t sum = 0;
        for (std::size_t j : m_slot_procs[slot]) {
            const std::uint64_t x = proc_val(stream, k, j);
            sum = std::min(sum + (x == codec::k_null ? 0 : std::min(x, k_sum_cap)), k_sum_cap);
        }
        return sum;
    }

    /// The processes of card-tick `slot` of tick `k`, appended to the output.
    bool processes(std::size_t k, std::size_t slot, DurationUs measured, const StoredCardTick& t) {
        const std::uint64_t slot_sm = slot_sum(Stream::proc_sm_cpct, k, slot);
        const std::uint64_t slot_mem = slot_sum(Stream::proc_mem_mib, k, slot);
        const DurationUs card_held =
            card_held_of(t.active_us, measured, t.idle_unknown_us, t.idle_unlisted_us);
        const auto known = [](std::uint64_t x) {
            return x == codec::k_null ? std::nullopt : std::optional(x);
        };
        for (std::size_t j : m_slot_procs[slot]) {
            StoredProc p;
            p.process_id = m_layout.procs[j].process_id;
            p.type = static_cast<telemetry::ProcessType>(m_layout.procs[j].type);
            const std::uint64_t mem = proc_val(Stream::proc_mem_mib, k, j);
            p.mem_used_mib = opt(mem);
            const std::uint64_t sm = proc_val(Stream::proc_sm_cpct, k, j);
            if (sm != codec::k_null) {
                p.sm_util_pct = static_cast<double>(sm) / 100.0;
            }
            if (const std::uint64_t active = proc_val(Stream::proc_active_us, k, j);
                active != codec::k_null) {
                if (!in_range(codec::unzigzag(active))) {
                    return false;
                }
                p.active_us =
                    codec::unzigzag(active) + proc_active_default(t.active_us, known(sm), slot_sm);
            }
            if (const std::uint64_t held = proc_val(Stream::proc_idle_held_us, k, j);
                held != codec::k_null) {
                if (!in_range(codec::unzigzag(held))) {
                    return false;
                }
                p.idle_held_us =
                    codec::unzigzag(held) + proc_idle_held_default(card_held, known(mem), slot_mem);
            }
            m_out.procs.push_back(p);
        }
        return true;
    }

    const BlockRow& m_row;
    const BlockLayout& m_layout;
    const std::array<codec::Values, k_stream_count>& m_v;
    const std::vector<const telemetry::CardFieldInfo*>& m_fields;
    DecodedTicks& m_out;
    const std::vector<std::vector<std::size_t>>& m_slot_procs; ///< per card: its processes
    std::size_t m_ex = 0;                                      ///< next value of shape_us
    std::size_t m_ax = 0;                                      ///< next value of alloc_us
};

} // namespace

/// A block's layout as parsed once, with the layout texts it was parsed from.
struct BlockDecoder::Parsed {
    std::string cards;
    std::string procs;
    bool ok = false;
    BlockLayout layout;
    std::vector<std::vector<std::size_t>> slot_procs; ///< per card slot: its processes' numbers
};

namespace {

/// How many layouts a BlockDecoder keeps: blocks of one run usually repeat the previous block's
/// layout; a few more cover the runs of several hosts interleaved in time.
constexpr std::size_t k_cached_layouts = 16;

} // namespace

CardFieldSet card_field_set(std::initializer_list<telemetry::CardField> fields) {
    CardFieldSet set;
    for (const telemetry::CardField f : fields) {
        set.set(static_cast<std::size_t>(f));
    }
    return set;
}

BlockDecoder::BlockDecoder(CardFieldSet fields)
    : m_values(std::make_unique<std::array<codec::Values, k_stream_count>>()) {
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (fields.test(static_cast<std::size_t>(f.field))) {
            m_fields.push_back(&f);
        }
    }
}

BlockDecoder::~BlockDecoder() = default;

const BlockDecoder::Parsed* BlockDecoder::layout_of(const BlockRow& row) {
    const auto same = [&](const std::unique_ptr<Parsed>& p) {
        return p->cards == row.cards && p->procs == row.procs;
    };
    auto it = std::find_if(m_layouts.begin(), m_layouts.end(), same);
    if (it == m_layouts.end()) {
        auto parsed = std::make_unique<Parsed>();
        parsed->cards = row.cards;
        parsed->procs = row.procs;
        parsed->ok = parse_layout(row, parsed->layout);
        if (parsed->ok) {
            parsed->slot_procs.resize(parsed->layout.gpus.size());
            for (std::size_t j = 0; j < parsed->layout.procs.size(); ++j) {
                const auto slot = static_cast<std::size_t>(parsed->layout.procs[j].slot);
                parsed->slot_procs[slot].push_back(j);
            }
        }
        if (m_layouts.size() == k_cached_layouts) {
            m_layouts.pop_back();
        }
        m_layouts.insert(m_layouts.begin(), std::move(parsed));
    } else if (it != m_layouts.begin()) { // most recently used first
        std::rotate(m_layouts.begin(), it, it + 1);
    }
    return m_layouts.front()->ok ? m_layouts.front().get() : nullptr;
}

bool BlockDecoder::decode(const BlockRow& row, DecodedTicks& out) {
    if (row.n_ticks < 0 || row.n_ticks > k_max_block_ticks || !in_range(row.t0_us) ||
        !in_range(row.tick_us)) {
        return false;
    }
    const Parsed* parsed = layout_of(row);
    if (parsed == nullptr) {
        return false;
    }
    const BlockLayout& layout = parsed->layout;
    const auto n = static_cast<std::size_t>(row.n_ticks);
    const std::size_t cards = layout.gpus.size();
    const std::size_t procs = layout.procs.size();
    std::array<codec::Values, k_stream_count>& v = *m_values;
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
    if (!Expander(row, layout, parsed->slot_procs, v, m_fields, out).run()) {
        out.ticks.resize(ticks_before);
        out.procs.resize(procs_before);
        return false;
    }
    return true;
}

bool decode_block(const BlockRow& row, DecodedTicks& out) {
    BlockDecoder decoder;
    return decoder.decode(row, out);
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

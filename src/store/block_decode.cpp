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

/// The value of stream `s` for a block written before the stream existed.
std::uint64_t absent_value(Stream s) {
    return s == Stream::proc_active_us ? codec::k_null : 0;
}

bool is_absent(const BlockRow& row, Stream s) {
    return static_cast<std::size_t>(s) >= static_cast<std::size_t>(Stream::unmeasured_us) &&
           row.streams[static_cast<std::size_t>(s)].empty();
}

/// Largest magnitude of a time, duration or difference a block may hold: 2^53 µs (285 years).
/// Anything beyond is damage, and sums of such values could overflow 64 bits.
constexpr std::int64_t k_max_time_us = std::int64_t{1} << 53;

bool in_range(std::int64_t us) {
    return us >= -k_max_time_us && us <= k_max_time_us;
}

/// Largest power a card-tick may record, in watts (a GPU draws a few hundred).
constexpr std::int64_t k_max_power_w = 1000000;

/// Appends the card-ticks of a block whose streams are decoded; false when they do not fit or
/// hold a time or power out of range.
bool expand(const BlockRow& row, const BlockLayout& layout,
            const std::array<codec::Values, k_stream_count>& v, DecodedTicks& out) {
    const auto n = static_cast<std::size_t>(row.n_ticks);
    const std::size_t cards = layout.gpus.size();
    const std::size_t procs = layout.procs.size();
    const auto val = [&](Stream s, std::size_t i) {
        return is_absent(row, s) ? absent_value(s) : v[static_cast<std::size_t>(s)].at(i);
    };
    std::vector<std::vector<std::size_t>> slot_procs(cards);
    for (std::size_t j = 0; j < procs; ++j) {
        slot_procs[static_cast<std::size_t>(layout.procs[j].slot)].push_back(j);
    }
    std::size_t ex = 0;
    const auto shape_value = [&] { return codec::unzigzag(val(Stream::shape_us, ex++)); };
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
            t.mem_util_pct = opt(at(Stream::mem_util_pct));
            t.mem_used_mib = opt(at(Stream::mem_used_mib));
            if (const auto w = opt(at(Stream::power_w))) {
                if (*w < 0 || *w > k_max_power_w) {
                    return false;
                }
                t.power_mw = *w * 1000;
            }
            t.temperature_c = opt(at(Stream::temperature_c));
            t.sm_clock_mhz = opt(at(Stream::sm_clock_mhz));
            t.clock_events = opt(at(Stream::clock_events));
            t.read_errors = opt(at(Stream::read_errors)).value_or(0);
            t.proc_begin = static_cast<std::uint32_t>(out.procs.size());
            std::uint64_t slot_sm = 0;
            for (std::size_t j : slot_procs[slot]) {
                constexpr std::uint64_t k_cap = std::uint64_t{1} << 40; // as BlockBuilder
                const std::uint64_t sm = val(Stream::proc_sm_cpct, k * procs + j);
                slot_sm =
                    std::min(slot_sm + (sm == codec::k_null ? 0 : std::min(sm, k_cap)), k_cap);
            }
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
        const auto s = static_cast<Stream>(i);
        if (is_absent(row, s)) {
            continue;
        }
        std::size_t count = n * period_of(s, cards, procs);
        if (s == Stream::shape_us) {
            const codec::Values& shapes = v[static_cast<std::size_t>(Stream::shape)];
            count = 0;
            for (std::size_t k = 0; k < n * cards; ++k) {
                const std::uint64_t shape = shapes.at(k);
                count += shape == k_shape_partial ? 3 : (shape == k_shape_explicit ? 5 : 0);
            }
        }
        if (!codec::decode(row.streams[i], count, period_of(s, cards, procs), v[i])) {
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

} // namespace gua::store

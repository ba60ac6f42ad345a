// Decoding of tick blocks back into card-ticks (the inverse of BlockBuilder).
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
    if (!cards.is_array() || !procs.is_array()) {
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

} // namespace

bool decode_block(const BlockRow& row, DecodedTicks& out) {
    BlockLayout layout;
    if (row.n_ticks < 0 || !parse_layout(row, layout)) {
        return false;
    }
    const auto n = static_cast<std::size_t>(row.n_ticks);
    const std::size_t cards = layout.gpus.size();
    const std::size_t procs = layout.procs.size();
    std::array<std::vector<std::uint64_t>, k_stream_count> v;
    const auto stream = [&](Stream s) -> std::vector<std::uint64_t>& {
        return v[static_cast<std::size_t>(s)];
    };
    for (std::size_t i = 0; i < k_stream_count; ++i) {
        const auto s = static_cast<Stream>(i);
        std::size_t count = n * cards;
        if (s == Stream::t0_delta || s == Stream::dur_delta) {
            count = n;
        } else if (s == Stream::proc_mem_mib || s == Stream::proc_sm_cpct) {
            count = n * procs;
        } else if (s == Stream::shape_us) {
            const std::vector<std::uint64_t>& shapes = stream(Stream::shape);
            count = 3 * static_cast<std::size_t>(
                            std::count(shapes.begin(), shapes.end(), k_shape_partial)) +
                    5 * static_cast<std::size_t>(
                            std::count(shapes.begin(), shapes.end(), k_shape_explicit));
        }
        if (!codec::decode(row.streams[i], count, period_of(s, cards, procs), v[i])) {
            return false;
        }
    }
    std::vector<std::vector<std::size_t>> slot_procs(cards);
    for (std::size_t j = 0; j < procs; ++j) {
        slot_procs[static_cast<std::size_t>(layout.procs[j].slot)].push_back(j);
    }
    std::size_t explicit_pos = 0;
    TimeUs prev_end = row.t0_us;
    for (std::size_t k = 0; k < n; ++k) {
        const TimeUs t0 = prev_end + codec::unzigzag(stream(Stream::t0_delta)[k]);
        const DurationUs duration = row.tick_us + codec::unzigzag(stream(Stream::dur_delta)[k]);
        prev_end = t0 + duration;
        for (std::size_t slot = 0; slot < cards; ++slot) {
            const std::size_t i = k * cards + slot;
            const auto at = [&](Stream s) { return stream(s)[i]; };
            StoredCardTick t;
            t.t0 = t0;
            t.duration_us = duration;
            t.gpu_id = layout.gpus[slot];
            t.run_id = row.run_id;
            t.util_source = static_cast<telemetry::UtilSource>(at(Stream::util_source));
            if (const auto u = opt(at(Stream::util_cpct))) {
                t.util_pct = static_cast<double>(*u) / 100.0;
            }
            const std::uint64_t shape = at(Stream::shape);
            const std::vector<std::uint64_t>& ex = stream(Stream::shape_us);
            if (shape == k_shape_partial) {
                DurationUs rest = duration;
                for (std::size_t b = 0; b < 3; ++b) {
                    t.bucket_us[b] = codec::unzigzag(ex[explicit_pos++]);
                    rest -= t.bucket_us[b];
                }
                t.bucket_us[3] = rest;
                t.active_us = duration - t.bucket_us[0];
            } else if (shape == k_shape_explicit) {
                if (ex[explicit_pos] != codec::k_null) {
                    t.active_us = codec::unzigzag(ex[explicit_pos]);
                }
                for (std::size_t b = 0; b < 4; ++b) {
                    t.bucket_us[b] = codec::unzigzag(ex[explicit_pos + 1 + b]);
                }
                explicit_pos += 5;
            } else if (shape != codec::k_null) {
                if (shape > 7) {
                    return false;
                }
                t.active_us = (shape & 4) != 0 ? duration : 0;
                t.bucket_us[shape & 3] = duration;
            }
            t.mem_util_pct = opt(at(Stream::mem_util_pct));
            t.mem_used_mib = opt(at(Stream::mem_used_mib));
            if (const auto w = opt(at(Stream::power_w))) {
                t.power_mw = *w * 1000;
            }
            t.temperature_c = opt(at(Stream::temperature_c));
            t.sm_clock_mhz = opt(at(Stream::sm_clock_mhz));
            t.clock_events = opt(at(Stream::clock_events));
            t.read_errors = opt(at(Stream::read_errors)).value_or(0);
            t.proc_begin = static_cast<std::uint32_t>(out.procs.size());
            for (std::size_t j : slot_procs[slot]) {
                const std::size_t pi = k * procs + j;
                StoredProc p;
                p.process_id = layout.procs[j].process_id;
                p.type = static_cast<telemetry::ProcessType>(layout.procs[j].type);
                p.mem_used_mib = opt(stream(Stream::proc_mem_mib)[pi]);
                if (const auto sm = opt(stream(Stream::proc_sm_cpct)[pi])) {
                    p.sm_util_pct = static_cast<double>(*sm) / 100.0;
                }
                out.procs.push_back(p);
            }
            t.proc_count = static_cast<std::uint32_t>(out.procs.size()) - t.proc_begin;
            out.ticks.push_back(t);
        }
    }
    return true;
}

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the tick-block decoder (src/store/block_decode.cpp) on rows as a damaged or
// hostile database file could hold them. Input: fields separated by the byte 0xFF (never part of
// UTF-8 text): "n_ticks tick_us t0_us end_us", cards JSON, procs JSON, then the stream texts in
// stream order (fuzz/corpus/block/ holds rows of real databases). The whole input is also a
// rollup evidence BLOB (src/store/evidence_format.cpp): whatever it decodes to re-encodes and
// decodes to the same totals.
#include "store/block.hpp"
#include "store/evidence.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

namespace {

std::vector<std::string_view> fields_of(std::string_view text) {
    std::vector<std::string_view> out;
    for (;;) {
        const std::size_t sep = text.find('\xff');
        out.push_back(text.substr(0, sep));
        if (sep == std::string_view::npos) {
            return out;
        }
        text.remove_prefix(sep + 1);
    }
}

/// Reads the next space-separated integer of `text` (0 when there is none).
std::int64_t next_int(std::string_view& text) {
    while (!text.empty() && text.front() == ' ') {
        text.remove_prefix(1);
    }
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return ec == std::errc() ? value : 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        const std::string_view blob(reinterpret_cast<const char*>(data), size);
        gua::audit::GpuTotals once;
        gua::store::decode_evidence(blob, once);
        gua::audit::GpuTotals twice;
        gua::store::decode_evidence(gua::store::encode_evidence(once), twice);
        if (gua::store::encode_evidence(twice) != gua::store::encode_evidence(once)) {
            std::abort();
        }
        gua::audit::IdentityTotals who;
        gua::store::decode_identity_evidence(blob, who);
    }
    const std::vector<std::string_view> fields =
        fields_of(std::string_view(reinterpret_cast<const char*>(data), size));
    gua::store::BlockRow row;
    std::string_view numbers = fields[0];
    row.id = 1;
    row.run_id = 1;
    row.n_ticks = next_int(numbers);
    row.tick_us = next_int(numbers);
    row.t0_us = next_int(numbers);
    row.end_us = next_int(numbers);
    row.cards = fields.size() > 1 ? fields[1] : "[]";
    row.procs = fields.size() > 2 ? fields[2] : "[]";
    for (std::size_t i = 0; i < row.streams.size() && i + 3 < fields.size(); ++i) {
        row.streams[i] = fields[i + 3];
    }
    gua::store::DecodedTicks out;
    const std::optional<gua::TimeUs> earliest = gua::store::earliest_tick_start(
        row.t0_us, row.n_ticks, row.tick_us, row.streams[0], row.streams[1]);
    const bool ok = gua::store::decode_block(row, out);
    // A decoder kept from input to input (its layout cache and buffers, as a scan keeps them)
    // decodes each row as a fresh one does.
    static gua::store::BlockDecoder kept;
    gua::store::DecodedTicks again;
    if (kept.decode(row, again) != ok || again.ticks.size() != out.ticks.size() ||
        again.procs.size() != out.procs.size()) {
        std::abort();
    }
    for (std::size_t i = 0; i < out.ticks.size(); ++i) {
        if (again.ticks[i].t0 != out.ticks[i].t0 ||
            again.ticks[i].active_us != out.ticks[i].active_us ||
            !(again.ticks[i].readings == out.ticks[i].readings)) {
            std::abort();
        }
    }
    if (ok) {
        // The scanner's bound from the timing streams alone is at or before every decoded tick.
        if (!earliest) {
            std::abort();
        }
        for (const gua::store::StoredCardTick& t : out.ticks) {
            if (t.t0 < *earliest) {
                std::abort();
            }
        }
        // Every card-tick's processes lie inside the decoded process list.
        for (const gua::store::StoredCardTick& t : out.ticks) {
            if (static_cast<std::size_t>(t.proc_begin) + t.proc_count > out.procs.size()) {
                std::abort();
            }
        }
        if (row.n_ticks > 0 && out.ticks.size() % static_cast<std::size_t>(row.n_ticks) != 0) {
            std::abort();
        }
    } else if (!out.ticks.empty() || !out.procs.empty()) {
        std::abort(); // a malformed row appends nothing
    }
    return 0;
}

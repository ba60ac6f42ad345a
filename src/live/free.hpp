// SPDX-License-Identifier: Apache-2.0
// `gua free`: which cards are truly idle now and have been for a while, not allocated, with
// enough free memory — judged from classified card-ticks (never from a guess about unmeasured
// time).
#pragma once

#include "audit/classify.hpp"
#include "audit/slices.hpp"
#include "core/time.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::live {

/// What `gua free` asks of a card.
struct FreeAsk {
    DurationUs for_us = 10 * k_us_per_minute;   ///< truly idle over at least this, up to now
    std::optional<std::int64_t> min_memory_mib; ///< free memory at least this; nullopt: any
    std::uint64_t count = 1;                    ///< cards needed (the exit status)
};

/// One card's verdict.
struct FreeCard {
    int index = 0;
    std::string uuid;
    std::string name;
    bool free = false;
    /// Why it is not free: active | idle-held | allocated | unmeasured | memory | memory-unknown;
    /// empty when free.
    std::string reason;
    std::string detail; ///< the reason in words, e.g. "active 4m 30s ago"
    /// Truly idle time just before the newest card-tick's end (counted back at least --for when
    /// there is that much).
    DurationUs truly_idle_us = 0;
    std::optional<std::int64_t> memory_free_mib;
    std::optional<std::int64_t> memory_total_mib;
};

/// The answer.
struct FreeModel {
    int schema_version = 1;
    std::string source;                  ///< "daemon" or "sampled"
    std::string db_path;                 ///< empty when no database was read
    std::string note;                    ///< why gua sampled NVML itself; empty otherwise
    std::optional<TimeUs> last_tick_end; ///< end of the newest card-tick judged
    FreeAsk ask;
    std::vector<FreeCard> gpus; ///< by index
    /// The free cards' indices, in order.
    std::vector<int> free_indices() const;
    bool enough() const { return free_indices().size() >= ask.count; }
};

/// True when a classified stretch counts as truly idle: nothing active, held or allocated, and at
/// most 1 % of it unmeasured (a ring period still open at a tick's end, not a lost tick).
bool is_truly_idle(const audit::StateTimes& t, DurationUs duration_us);

/// Judges one card from its newest card-tick `newest` and its classified card-ticks `spans` (time
/// order, the newest last, reaching back at least `ask.for_us` when recorded). Gaps between
/// card-ticks longer than 1 % of the later one are unmeasured time.
FreeCard judge_card(const telemetry::CardTickRecord& newest,
                    const std::vector<audit::StateSpan>& spans, const FreeAsk& ask);

/// The free cards' indices, comma-separated, and a newline; nothing when none is free.
std::string render_free_text(const FreeModel& m);

/// `CUDA_VISIBLE_DEVICES=` and the first `ask.count` free indices, and a newline; nothing when
/// fewer than that are free.
std::string render_free_cuda(const FreeModel& m);

/// `gua free --format json` (docs/free.md): the question, the answer and every card's verdict.
std::string render_free_json(const FreeModel& m);

} // namespace gua::live

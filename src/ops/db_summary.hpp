// SPDX-License-Identifier: Apache-2.0
// What `gua status` says about the database: size, span, the latest run, the GPUs in the last
// tick, data-quality problems and the last hour's headline.
#pragma once

#include "audit/card_tick.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::ops {

/// A read-only summary of a gua database.
struct DatabaseSummary {
    bool exists = false;
    std::string error;            ///< set when the file exists but cannot be read
    std::uint64_t size_bytes = 0; ///< the file plus its -wal
    std::optional<TimeUs> first_tick;
    std::optional<TimeUs> last_tick;     ///< start of the newest card-tick
    std::optional<TimeUs> last_tick_end; ///< its end
    std::optional<store::RunRow> last_run;
    std::vector<store::GpuRow> gpus; ///< GPUs in the newest tick
    std::vector<std::string> problems;
    std::optional<report::StateShares> last_hour; ///< nullopt when the last hour has no data
};

/// Reads `db` (never writes). `running` says whether a daemon records now, so that a stale
/// last tick is a problem. Never throws: errors end up in `error`.
DatabaseSummary summarize_database(const std::string& db, const audit::Thresholds& thresholds,
                                   TimeUs now, bool running);

} // namespace gua::ops

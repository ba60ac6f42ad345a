// SPDX-License-Identifier: Apache-2.0
// Restart survival: the counters start from every card-tick already recorded in the database.
#pragma once

#include "export/metrics.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <vector>

namespace gua::exporter {

/// What a restore read.
struct Restored {
    std::uint64_t card_ticks = 0;         ///< card-ticks added to the counters
    std::vector<std::int64_t> bad_blocks; ///< ids of malformed tick blocks, skipped
};

/// Adds every card-tick recorded in `db` to `metrics` (which must be fresh), ranking users by
/// their recorded GPU seconds for the top-N labels, with the allocations recorded (so the owner
/// counters continue). A malformed tick block is skipped and named in the result, never fatal.
/// Throws Fatal on database errors.
Restored restore_from_database(store::Database& db, Metrics& metrics);

} // namespace gua::exporter

// Restart survival: the counters start from every card-tick already recorded in the database.
#pragma once

#include "export/metrics.hpp"
#include "store/database.hpp"

#include <cstdint>

namespace gua::exporter {

/// Adds every card-tick recorded in `db` to `metrics` (which must be fresh), ranking users by
/// their recorded GPU seconds for the top-N labels. Returns the number of card-ticks read.
/// Throws Fatal on database errors.
std::uint64_t restore_from_database(store::Database& db, Metrics& metrics);

} // namespace gua::exporter

// Databases written before schema version 3 (one row per card-tick and per process-tick).
#pragma once

#include "store/database.hpp"

namespace gua::store {

/// Called by the version 3 migration after the row-per-tick tables were renamed to
/// legacy_card_tick / legacy_proc_tick: an empty file goes on; a file with recorded card-ticks is
/// refused with Fatal (the migration's transaction rolls back, the file stays as it was).
void convert_legacy_ticks(Database& db);

} // namespace gua::store

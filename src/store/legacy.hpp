// SPDX-License-Identifier: Apache-2.0
// Databases written before schema version 3 (one row per card-tick and per process-tick): their
// rows are converted into tick blocks and rollups when the file is upgraded.
#pragma once

#include "audit/classify.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <functional>

namespace gua::store {

/// True while the file still holds row-per-tick tables (legacy_card_tick) to convert.
bool has_legacy_ticks(Database& db);

/// Converts the rows of legacy_card_tick / legacy_proc_tick into tick blocks of their own runs
/// (through store::Writer, so nothing recorded changes meaning), builds the rollups with
/// `thresholds` (the configured ones, so reports can use them), and drops the legacy tables.
/// Works in transactions of a few thousand ticks that also delete the rows they converted, so an
/// interrupted conversion resumes where it stopped. The caller must hold the daemon lock
/// (daemon::DatabaseLock): two converters would write the same run's open block. `progress` (may
/// be empty) is called after each transaction and before the long final steps with (card-ticks
/// converted, card-ticks in total). Returns the card-ticks converted.
std::uint64_t
convert_legacy_ticks(Database& db, const audit::Thresholds& thresholds,
                     const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

} // namespace gua::store

// SPDX-License-Identifier: Apache-2.0
// The administrator views over tick blocks (card_tick, proc_tick, card_tick_state, process_tick
// and their helpers block_tick, block_card), generated from the stream layout so that plain
// sqlite3 can read raw card-ticks.
#pragma once

#include <string>

namespace gua::store {

/// CREATE VIEW statements of the current schema, in dependency order. The newest migration holds
/// a frozen copy of this text; a change here needs a new migration with the new text.
std::string views_sql();

} // namespace gua::store

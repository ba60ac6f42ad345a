// The administrator views over tick blocks (card_tick, proc_tick, card_tick_state, process_tick),
// generated from the stream layout so that plain sqlite3 can read raw card-ticks.
#pragma once

#include <string>

namespace gua::store {

/// CREATE VIEW statements of schema version 1, in dependency order.
std::string views_v1_sql();

} // namespace gua::store

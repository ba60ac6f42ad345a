// SPDX-License-Identifier: Apache-2.0
// Where gua keeps its database when no --db is given.
#pragma once

#include <optional>
#include <string>

namespace gua::store {

/// The system service's database.
inline constexpr const char* k_system_db_path = "/var/lib/gua/gua.db";

/// The database a recording process should write: $GUA_DB, else /var/lib/gua/gua.db for root,
/// else $XDG_STATE_HOME/gua/gua.db (default ~/.local/state/gua/gua.db).
std::string default_write_path();

/// The database a report should read: $GUA_DB, else the user's database if it exists, else the
/// system database if it exists; nullopt when neither exists.
std::optional<std::string> default_read_path();

/// The user's own database path ($XDG_STATE_HOME/gua/gua.db or ~/.local/state/gua/gua.db).
std::string user_db_path();

} // namespace gua::store

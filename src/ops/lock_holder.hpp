// Who is recording to a database: the process holding the daemon's flock on "<db>.lock", found
// in /proc/locks without touching the lock (probing it could make a starting daemon fail).
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace gua::ops {

/// The pid holding the exclusive flock on `db_path` + ".lock"; nullopt when nobody holds it or
/// the file does not exist.
std::optional<pid_t> database_lock_holder(const std::string& db_path);

} // namespace gua::ops

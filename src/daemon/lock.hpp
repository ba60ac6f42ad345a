// One daemon per database: an exclusive flock on "<db>.lock" holding the owner's pid.
#pragma once

#include "core/fd.hpp"

#include <string>

namespace gua::daemon {

/// Holds the lock for its lifetime.
class DatabaseLock {
  public:
    /// Takes the lock for `db_path` (creating the directory if needed). Throws Fatal with
    /// ExitCode::conflict naming the other daemon's pid when it is held.
    explicit DatabaseLock(const std::string& db_path);

  private:
    UniqueFd m_fd; ///< the lock is released when it closes
};

} // namespace gua::daemon

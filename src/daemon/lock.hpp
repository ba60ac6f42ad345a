// SPDX-License-Identifier: Apache-2.0
// One daemon per database: an OFD lock on the database file itself (layout: ops/lock_holder.hpp),
// so every path to the file meets the same lock; it also tells whether the file is still there.
#pragma once

#include "core/fd.hpp"
#include "ops/lock_holder.hpp"

#include <array>
#include <optional>
#include <string>

namespace gua::daemon {

/// What DatabaseLock does when the database file does not exist.
enum class IfMissing { create, fail };

/// Holds the lock for its lifetime. Construct it before the first SQLite connection to the file
/// and destroy it after the last (closing a descriptor of a file drops the process's POSIX locks
/// on it, SQLite's included).
class DatabaseLock {
  public:
    /// Takes the lock of the database file `db_path` (with IfMissing::create, an empty file and
    /// its directory are created when missing). Throws Fatal with ExitCode::conflict naming the
    /// other daemon's pid when a daemon holds it through any path, and Fatal when the file is
    /// missing (IfMissing::fail) or cannot be opened.
    explicit DatabaseLock(const std::string& db_path, IfMissing if_missing = IfMissing::create);

    /// Publishes (or withdraws) `alert` for `gua status` and `gua doctor`. Never throws.
    void set_alert(ops::DaemonAlert alert, bool raised) noexcept;
    /// nullopt while `db_path` still names the locked file; else what happened to it (deleted,
    /// or the path now names another file or none). Two system calls; never throws.
    std::optional<std::string> file_gone() const;

  private:
    std::string m_path;
    UniqueFd m_fd; ///< the locks are released when it closes
    std::array<bool, ops::k_alert_count> m_raised{};
};

} // namespace gua::daemon

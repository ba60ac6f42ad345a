// SPDX-License-Identifier: Apache-2.0
// What the daemon really stored: committed card-ticks and ticks not stored, said loudly (a log
// line at each change, an alert for `gua status` and `gua doctor`) when writes fail or the
// database file vanishes from its path.
#pragma once

#include "daemon/lock.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gua::daemon {

/// Follows the outcome of every tick's write. Not thread-safe (the sampling thread owns it).
class StorageWatch {
  public:
    /// Publishes alerts through `lock` and writes lines to `log`; both must outlive it.
    StorageWatch(DatabaseLock& lock, std::function<void(const std::string&)> log);

    /// Before writing tick `seq`: true while the locked file is still at its path. Once it is
    /// not, logs what happened (the first time), counts each tick as not stored and returns false
    /// (the daemon stops: what it would write could not be read at the path).
    bool database_present(std::uint64_t seq);
    /// The write of a tick with `card_ticks` card-ticks committed.
    void stored(std::size_t card_ticks);
    /// The write of tick `seq` failed with `error`; nothing of it is stored.
    void failed(std::uint64_t seq, const std::string& error);

    /// Card-ticks committed by this daemon.
    std::uint64_t stored_card_ticks() const { return m_stored_card_ticks; }
    /// Ticks not stored (failed writes, and the tick that found the database gone).
    std::uint64_t write_errors() const { return m_write_errors; }
    /// What happened to the database file, once it left its path.
    const std::optional<std::string>& gone() const { return m_gone; }

  private:
    DatabaseLock& m_lock;
    std::function<void(const std::string&)> m_log;
    std::uint64_t m_stored_card_ticks = 0;
    std::uint64_t m_write_errors = 0;
    std::uint64_t m_failing_since = 0; ///< write errors when the current failure streak began
    std::string m_last_error;          ///< of the current failure streak; empty: writes succeed
    std::optional<std::string> m_gone;
};

} // namespace gua::daemon

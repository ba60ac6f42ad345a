// SPDX-License-Identifier: Apache-2.0
// StorageWatch: one log line when a failure streak starts, when its cause changes and when it ends
// (not one per tick: a full disk would otherwise fill the log as well).
#include "daemon/storage_watch.hpp"

#include <fmt/format.h>

namespace gua::daemon {

StorageWatch::StorageWatch(DatabaseLock& lock, std::function<void(const std::string&)> log)
    : m_lock(lock), m_log(std::move(log)) {}

bool StorageWatch::database_present(std::uint64_t seq) {
    if (m_gone) {
        ++m_write_errors;
        return false;
    }
    m_gone = m_lock.file_gone();
    if (!m_gone) {
        return true;
    }
    ++m_write_errors;
    m_log(fmt::format("ERROR: {} while the daemon was recording: tick {} and later ones cannot be "
                      "stored there; stopping (the {} card-ticks stored since start are in the "
                      "old file, readable only while it still has a name); start gua again to "
                      "record into a new database",
                      *m_gone, seq, m_stored_card_ticks));
    return false;
}

void StorageWatch::stored(std::size_t card_ticks) {
    m_stored_card_ticks += card_ticks;
    if (!m_last_error.empty()) {
        m_log(fmt::format("writes succeed again; {} ticks were not stored",
                          m_write_errors - m_failing_since));
        m_last_error.clear();
        m_lock.set_alert(ops::DaemonAlert::writes_failing, false);
    }
}

void StorageWatch::failed(std::uint64_t seq, const std::string& error) {
    if (m_last_error.empty()) {
        m_failing_since = m_write_errors;
    }
    ++m_write_errors;
    if (error != m_last_error) {
        m_log(fmt::format("ERROR: tick {} not stored: {}; ticks are lost until writes succeed "
                          "again (gua_write_errors_total counts them)",
                          seq, error));
        m_last_error = error.empty() ? std::string("unknown error") : error;
        m_lock.set_alert(ops::DaemonAlert::writes_failing, true);
    }
}

} // namespace gua::daemon

// SPDX-License-Identifier: Apache-2.0
// The daemon's log: timestamped lines to stderr or to a file that SIGHUP reopens (logrotate).
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

namespace gua::daemon {

/// Writes one line per message. Not thread-safe (the daemon logs from its sampling thread).
class Log {
  public:
    /// Logs to `path`, or to stderr when empty. Throws Fatal when the file cannot be opened.
    explicit Log(std::string path);
    ~Log();
    Log(const Log&) = delete;
    Log& operator=(const Log&) = delete;
    /// Writes "2026-05-11T08:00:00Z message\n" and flushes. A failed write (disk full, a closed
    /// stderr) loses the line and never throws: logging never stops the daemon.
    void line(const std::string& message) noexcept;
    /// Reopens the file (after rotation); keeps the old stream if reopening fails. Never throws.
    void reopen() noexcept;

  private:
    std::string m_path;
    std::FILE* m_file = nullptr;
    std::mutex m_mutex; ///< line() is called from the delivery thread as well
};

} // namespace gua::daemon

// SPDX-License-Identifier: Apache-2.0
// The terminal side of `gua top`: a session that switches to the alternate screen without echo or
// line buffering and always restores the terminal, the terminal's size and its resize signal, and
// waiting for keys. Thin: what the keys mean is live/keys.hpp's.
#pragma once

#include "core/time.hpp"

#include <atomic>
#include <csignal>
#include <string>
#include <termios.h>

namespace gua::live {

/// Owns the terminal while `gua top` runs; the destructor restores it (also after a signal ended
/// the loop, since handlers only set flags).
class TerminalSession {
  public:
    /// `in_fd` (-1: none) loses echo and line buffering; `out_fd` gets the alternate screen and a
    /// hidden cursor.
    TerminalSession(int in_fd, int out_fd);
    ~TerminalSession();
    TerminalSession(const TerminalSession&) = delete;
    TerminalSession& operator=(const TerminalSession&) = delete;

    /// Replaces the screen's contents with `frame`.
    void draw(const std::string& frame) const;

  private:
    int m_in = -1;
    int m_out = -1;
    bool m_restore_termios = false;
    termios m_saved{};
};

/// A terminal's size in character cells; 0 where unknown.
struct TerminalSize {
    int columns = 0;
    int rows = 0;
};

/// The size of the terminal on `fd` (TIOCGWINSZ); zeros when `fd` is not a terminal or does not
/// say.
TerminalSize terminal_size(int fd);

/// The width of the terminal on `fd` in columns, or 0 (terminal_size).
int terminal_columns(int fd);

/// Catches SIGWINCH while it lives and makes it readable on a pipe (the self-pipe trick), so that
/// a poll(2) on fd() wakes at once when the terminal is resized. One at a time; the previous
/// SIGWINCH disposition comes back at destruction. SIGINT and SIGTERM are left alone.
class ResizeSignal {
  public:
    ResizeSignal();
    ~ResizeSignal();
    ResizeSignal(const ResizeSignal&) = delete;
    ResizeSignal& operator=(const ResizeSignal&) = delete;

    /// The read end to poll; -1 when the pipe could not be made (resizes then show at the next
    /// refresh).
    int fd() const { return m_read; }
    /// Empties the pipe; true when a resize had arrived.
    bool take() const;

  private:
    int m_read = -1;
    int m_write = -1;
    struct sigaction m_previous {};
};

/// What arrived while waiting.
struct Input {
    std::string bytes;    ///< keys, as read
    bool resized = false; ///< the resize pipe was readable (not yet emptied)
    bool closed = false;  ///< the key fd reached end of file or hung up
};

/// Waits up to `timeout_us` for bytes on `key_fd` or a wake-up on `wake_fd` (either -1: none),
/// returning at the first of them, when `stop` is set (checked at least every 100 ms) or when
/// the time is up (an empty Input).
Input wait_for_input(int key_fd, int wake_fd, DurationUs timeout_us, const std::atomic<bool>& stop);

} // namespace gua::live

// The terminal side of `gua top`: a session that switches to the alternate screen without echo or
// line buffering and always restores the terminal, and waiting that notices the quit key.
#pragma once

#include "core/clock.hpp"

#include <atomic>
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

/// The width of the terminal on `fd` in columns (TIOCGWINSZ), or 0 when `fd` is not a terminal
/// or does not say.
int terminal_columns(int fd);

/// Waits up to `timeout_us` for a key on `fd` (-1: just waits), returning early when `stop` is
/// set. True when 'q' or 'Q' was pressed (or `fd` reached end of file).
bool wait_for_quit(int fd, DurationUs timeout_us, const std::atomic<bool>& stop);

/// A system clock whose sleeps watch `fd` for the quit key and then set `quit`, so that a sampler
/// running on it stops as soon as the user presses q.
class KeyWatchingClock final : public Clock {
  public:
    KeyWatchingClock(int fd, std::atomic<bool>& quit) : m_fd(fd), m_quit(quit) {}
    TimeUs wall_now() override { return m_clock.wall_now(); }
    std::int64_t mono_now() override { return m_clock.mono_now(); }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;

  private:
    SystemClock m_clock;
    int m_fd;
    std::atomic<bool>& m_quit;
};

} // namespace gua::live

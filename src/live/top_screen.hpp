// SPDX-License-Identifier: Apache-2.0
// `gua top`'s screen: the newest view drawn at the terminal's current size, redrawn at once on a
// key or a resize while it waits; plain frames when standard output is not a terminal.
#pragma once

#include "core/clock.hpp"
#include "live/keys.hpp"
#include "live/model.hpp"
#include "live/proc_usage.hpp"
#include "live/render.hpp"
#include "live/terminal.hpp"

#include <atomic>
#include <optional>
#include <string>

namespace gua::live {

/// How the screen is set up.
struct TopScreenOptions {
    int key_fd = -1;           ///< keys to read (a terminal in raw mode); -1: none
    int out_fd = 1;            ///< where frames go
    bool tty = false;          ///< out_fd is a terminal: alternate screen, redraw in place
    NowTextOptions text;       ///< colours and bars; columns follow the terminal
    DurationUs refresh_us = 0; ///< named in the header
    bool readonly = false;     ///< --readonly: the signal keys are off
    std::string proc_root = "/proc";
};

/// Owns the terminal (on a tty) and draws views. Not thread-safe.
class TopScreen {
  public:
    explicit TopScreen(TopScreenOptions options);

    /// Shows `text` until the first view arrives (terminal only).
    void placeholder(const std::string& text);
    /// Shows `model` with its holders' host CPU % and RSS: sorted, filtered (and as a tree when
    /// asked) and cut into history cells for the current width on every draw.
    void show(NowModel model);
    /// Reads keys and resizes until the monotonic clock reaches `deadline` or `stop` is set,
    /// redrawing after each; true as soon as the user quits (q, Q, Esc, or the keys closed).
    bool wait_until(std::int64_t deadline, const std::atomic<bool>& stop);

  private:
    void draw();
    /// The view as drawn: holders arranged, the tree when asked.
    NowModel arranged() const;
    /// Does what a key asked (selection, signal offers and confirmations); true when it quits.
    bool act(KeyAction action);
    void move_selection(int step);
    void offer_signal(int sig);

    TopScreenOptions m_o;
    std::optional<TerminalSession> m_session;
    std::optional<ResizeSignal> m_resize;
    KeyMachine m_keys;
    std::optional<NowModel> m_model;
    CpuMeter m_meter;
    std::string m_placeholder;
    SystemClock m_clock;
};

/// A system clock whose sleeps go through a TopScreen, so that a sampler running on it keeps the
/// screen answering keys and sets `quit` as soon as the user quits.
class ScreenClock final : public Clock {
  public:
    ScreenClock(TopScreen& screen, std::atomic<bool>& quit) : m_screen(screen), m_quit(quit) {}
    TimeUs wall_now() override { return m_clock.wall_now(); }
    std::int64_t mono_now() override { return m_clock.mono_now(); }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override;

  private:
    SystemClock m_clock;
    TopScreen& m_screen;
    std::atomic<bool>& m_quit;
};

} // namespace gua::live

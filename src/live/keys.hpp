// SPDX-License-Identifier: Apache-2.0
// The keys of `gua top` as a small state machine: bytes from the terminal in, what to do out
// (redraw, quit), with the view they change. Pure: reading the terminal is live/terminal.hpp's job.
#pragma once

#include "live/view.hpp"

#include <cstdint>
#include <string_view>

namespace gua::live {

/// What the screen must do after some input.
enum class KeyAction : std::uint8_t {
    none,        ///< nothing complete yet (the start of an escape sequence)
    redraw,      ///< a key was pressed: draw again now
    select_prev, ///< ↑: select the holder above
    select_next, ///< ↓: select the holder below
    ask_term,    ///< k: offer SIGTERM to the selected holder (asks for confirmation)
    ask_kill,    ///< K: offer SIGKILL to the selected holder (asks for confirmation)
    confirm,     ///< y while a signal waits for its confirmation: send it
    quit         ///< q, Q or a lone Esc outside the filter prompt and the help
};

/// Decodes keys and applies them to a TopView. Keys: i, m, s, u sort the holders by idle-held
/// time, memory, SM % or user (the same key again: the default order); / opens the filter prompt
/// (typed text, Backspace, Ctrl-U; Enter applies, an empty Enter or Esc clears the filter); ?
/// toggles the help; t the process tree; ↑ and ↓ select a holder; k and K ask to send it SIGTERM
/// or SIGKILL (the screen checks and asks; then y confirms, any other key cancels); q, Q and a
/// lone Esc quit (Esc first closes the prompt, the help or a confirmation). Other escape sequences
/// (function keys, Alt+key) are ignored whole.
class KeyMachine {
  public:
    /// Feeds one byte.
    KeyAction feed(char byte);
    /// Feeds bytes in order and returns the strongest action (quit > redraw > none); bytes after a
    /// quit are dropped.
    KeyAction feed(std::string_view bytes);
    /// Called when no more bytes came within a short wait after an Esc: a lone Esc acts now, an
    /// unfinished sequence is dropped.
    KeyAction timeout();
    /// True while an Esc waits to be told apart from the start of a sequence (call timeout() when
    /// no byte follows soon).
    bool pending() const { return m_escape != Escape::none; }
    /// The view as the keys so far left it.
    const TopView& view() const { return m_view; }
    /// The view, for the screen to set the selection, a confirmation or a message.
    TopView& view() { return m_view; }

  private:
    enum class Escape : std::uint8_t { none, escape, csi, ss3 };
    KeyAction lone_escape();
    KeyAction arrow(unsigned char final_byte);
    KeyAction key(unsigned char c);
    KeyAction edit(unsigned char c);

    Escape m_escape = Escape::none;
    bool m_drop_continuation = false; ///< the filter dropped a lead byte: drop what follows it
    TopView m_view;
};

} // namespace gua::live

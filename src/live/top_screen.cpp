// SPDX-License-Identifier: Apache-2.0
// Drawing `gua top` and answering its keys and resizes between refreshes.
#include "live/top_screen.hpp"

#include "live/build.hpp"

#include <algorithm>
#include <cstdio>

namespace gua::live {

namespace {

/// How long an Esc waits for the rest of an escape sequence before it counts as a lone Esc.
/// Terminals send a sequence in one write; this only has to cover a slow link.
constexpr DurationUs k_escape_wait_us = 150 * k_us_per_ms;

} // namespace

TopScreen::TopScreen(TopScreenOptions options) : m_o(std::move(options)) {
    m_o.text.history = true;
    if (m_o.tty) {
        m_session.emplace(m_o.key_fd, m_o.out_fd);
        m_resize.emplace();
    }
}

void TopScreen::placeholder(const std::string& text) {
    m_placeholder = text;
    draw();
}

void TopScreen::show(NowModel model) {
    m_model = std::move(model);
    draw();
}

void TopScreen::draw() {
    if (!m_model) {
        if (m_session) {
            m_session->draw(m_placeholder);
        }
        return;
    }
    const TerminalSize size = m_o.tty ? terminal_size(m_o.out_fd) : TerminalSize{};
    NowModel m = *m_model;
    arrange_holders(m, m_keys.view());
    slice_history(m, history_cells(size.columns));
    NowTextOptions text = m_o.text;
    text.columns = size.columns;
    const std::string frame = render_top_frame(m, m_keys.view(), text, m_o.refresh_us, size.rows);
    if (m_session) {
        m_session->draw(frame);
        return;
    }
    std::fwrite(frame.data(), 1, frame.size(), stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
}

bool TopScreen::wait_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    const int wake_fd = m_resize ? m_resize->fd() : -1;
    while (!stop.load()) {
        const DurationUs left = deadline - m_clock.mono_now();
        if (left <= 0 && !m_keys.pending()) {
            return false;
        }
        const Input in =
            wait_for_input(m_o.key_fd, wake_fd, m_keys.pending() ? k_escape_wait_us : left, stop);
        if (in.closed) {
            return true;
        }
        KeyAction action = KeyAction::none;
        if (!in.bytes.empty()) {
            action = m_keys.feed(in.bytes);
        } else if (m_keys.pending() && !in.resized && !stop.load()) {
            action = m_keys.timeout(); // nothing followed the Esc
        }
        if (m_resize && m_resize->take()) {
            action = std::max(action, KeyAction::redraw);
        }
        if (action == KeyAction::quit) {
            return true;
        }
        if (action == KeyAction::redraw) {
            draw();
        }
    }
    return false;
}

void ScreenClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    if (m_screen.wait_until(deadline, stop)) {
        m_quit.store(true);
    }
}

} // namespace gua::live

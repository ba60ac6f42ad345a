// SPDX-License-Identifier: Apache-2.0
// Drawing `gua top` and answering its keys and resizes between refreshes.
#include "live/top_screen.hpp"

#include "live/build.hpp"
#include "live/signal.hpp"
#include "live/tree.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>

namespace gua::live {

namespace {

/// How long an Esc waits for the rest of an escape sequence before it counts as a lone Esc.
/// Terminals send a sequence in one write; this only has to cover a slow link.
constexpr DurationUs k_escape_wait_us = 150 * k_us_per_ms;

} // namespace

TopScreen::TopScreen(TopScreenOptions options) : m_o(std::move(options)), m_meter(m_o.proc_root) {
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
    m_meter.measure(model, m_clock.mono_now());
    m_model = std::move(model);
    draw();
}

NowModel TopScreen::arranged() const {
    NowModel m = *m_model;
    arrange_holders(m, m_keys.view());
    if (m_keys.view().tree) {
        m.tree = proc_tree_rows(m.holders, m_o.proc_root);
    }
    return m;
}

void TopScreen::draw() {
    if (!m_model) {
        if (m_session) {
            m_session->draw(m_placeholder);
        }
        return;
    }
    const TerminalSize size = m_o.tty ? terminal_size(m_o.out_fd) : TerminalSize{};
    NowModel m = arranged();
    slice_history(m, history_cells(size.columns));
    NowTextOptions text = m_o.text;
    text.columns = size.columns;
    m.selected_pid = m_keys.view().selected_pid;
    TopView view = m_keys.view();
    view.readonly = m_o.readonly;
    const std::string frame = render_top_frame(m, view, text, m_o.refresh_us, size.rows);
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
        bool changed = false;
        for (const char byte : in.bytes) {
            const KeyAction action = m_keys.feed(byte);
            if (act(action)) {
                return true;
            }
            changed = changed || action != KeyAction::none;
        }
        if (in.bytes.empty() && m_keys.pending() && !in.resized && !stop.load()) {
            const KeyAction action = m_keys.timeout(); // nothing followed the Esc
            if (act(action)) {
                return true;
            }
            changed = changed || action != KeyAction::none;
        }
        if ((m_resize && m_resize->take()) || changed) {
            draw();
        }
    }
    return false;
}

bool TopScreen::act(KeyAction action) {
    switch (action) {
    case KeyAction::quit:
        return true;
    case KeyAction::select_prev:
        move_selection(-1);
        break;
    case KeyAction::select_next:
        move_selection(1);
        break;
    case KeyAction::ask_term:
        offer_signal(SIGTERM);
        break;
    case KeyAction::ask_kill:
        offer_signal(SIGKILL);
        break;
    case KeyAction::confirm: {
        TopView& view = m_keys.view();
        if (view.confirm) {
            const TopView::Confirm c = *view.confirm;
            view.confirm.reset();
            view.message = m_o.readonly ? "read-only (--readonly): no signals"
                                        : send_signal({c.pid, c.start_ticks, c.user, c.command},
                                                      c.sig, m_o.proc_root);
        }
        break;
    }
    case KeyAction::none:
    case KeyAction::redraw:
        break;
    }
    return false;
}

void TopScreen::move_selection(int step) {
    if (!m_model) {
        return;
    }
    const NowModel m = arranged();
    std::vector<const HolderNow*> rows;
    if (m.tree.empty()) {
        for (const HolderNow& h : m.holders) {
            rows.push_back(&h);
        }
    } else {
        for (const TreeRow& r : m.tree) {
            if (r.holder) {
                rows.push_back(&m.holders[*r.holder]);
            }
        }
    }
    if (rows.empty()) {
        return;
    }
    TopView& view = m_keys.view();
    std::ptrdiff_t at = -1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (view.selected_pid == rows[i]->pid && view.selected_start == rows[i]->start_ticks) {
            at = static_cast<std::ptrdiff_t>(i);
            break;
        }
    }
    const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(rows.size()) - 1;
    at = at < 0 ? (step > 0 ? 0 : last) : std::clamp<std::ptrdiff_t>(at + step, 0, last);
    view.selected_pid = rows[static_cast<std::size_t>(at)]->pid;
    view.selected_start = rows[static_cast<std::size_t>(at)]->start_ticks;
}

void TopScreen::offer_signal(int sig) {
    TopView& view = m_keys.view();
    if (m_o.readonly) {
        view.message = "read-only (--readonly): no signals";
        return;
    }
    const HolderNow* target = nullptr;
    if (m_model && view.selected_pid) {
        for (const HolderNow& h : m_model->holders) {
            if (h.pid == *view.selected_pid && h.start_ticks == view.selected_start) {
                target = &h;
                break;
            }
        }
    }
    if (target == nullptr) {
        view.message = "select a holder with ↑ or ↓ first";
        return;
    }
    const SignalTarget t{target->pid, target->start_ticks, target->user,
                         target->command_line.empty() ? target->command : target->command_line};
    const std::string why = why_not_signal(t, m_o.proc_root);
    if (!why.empty()) {
        view.message = "cannot signal: " + why;
        return;
    }
    view.confirm = TopView::Confirm{sig, t.pid, t.start_ticks, t.user, t.command};
}

void ScreenClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    if (m_screen.wait_until(deadline, stop)) {
        m_quit.store(true);
    }
}

} // namespace gua::live

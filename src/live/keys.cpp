// SPDX-License-Identifier: Apache-2.0
// Key decoding for `gua top`: plain keys, the filter prompt, and escape sequences told apart
// from a lone Esc.
#include "live/keys.hpp"

#include <algorithm>

namespace gua::live {

namespace {

constexpr std::size_t k_max_filter_bytes = 64;

void toggle_sort(TopView& v, HolderSort sort) {
    v.sort = v.sort == sort ? HolderSort::standard : sort;
}

void erase_code_point(std::string& s) {
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) {
        s.pop_back(); // UTF-8 continuation bytes
    }
    if (!s.empty()) {
        s.pop_back();
    }
}

} // namespace

KeyAction KeyMachine::feed(std::string_view bytes) {
    KeyAction strongest = KeyAction::none;
    for (const char b : bytes) {
        const KeyAction a = feed(b);
        strongest = std::max(strongest, a);
        if (a == KeyAction::quit) {
            break;
        }
    }
    return strongest;
}

KeyAction KeyMachine::feed(char byte) {
    const auto c = static_cast<unsigned char>(byte);
    switch (m_escape) {
    case Escape::escape:
        if (c == '[') {
            m_escape = Escape::csi;
            return KeyAction::none;
        }
        if (c == 'O') {
            m_escape = Escape::ss3;
            return KeyAction::none;
        }
        if (c == 0x1b) { // Esc Esc: the first was a lone Esc, the second may start a sequence
            const KeyAction first = lone_escape();
            m_escape = first == KeyAction::quit ? Escape::none : Escape::escape;
            return first;
        }
        m_escape = Escape::none; // Alt+key: ignored
        return KeyAction::redraw;
    case Escape::csi:
        if (c >= 0x40 && c <= 0x7e) { // the final byte
            m_escape = Escape::none;
            return arrow(c);
        }
        if (c >= 0x20 && c < 0x40) { // parameters and intermediates
            return KeyAction::none;
        }
        m_escape = Escape::none; // not a sequence after all: the byte is a key
        return key(c);
    case Escape::ss3:
        m_escape = Escape::none;
        return arrow(c);
    case Escape::none:
        break;
    }
    return key(c);
}

KeyAction KeyMachine::timeout() {
    const Escape was = m_escape;
    m_escape = Escape::none;
    return was == Escape::escape ? lone_escape()
           : was == Escape::none ? KeyAction::none
                                 : KeyAction::redraw;
}

KeyAction KeyMachine::arrow(unsigned char final_byte) {
    if (m_view.editing) {
        return KeyAction::redraw;
    }
    m_view.message.clear();
    if (m_view.confirm) {
        m_view.confirm.reset();
        m_view.message = "cancelled";
        return KeyAction::redraw;
    }
    return final_byte == 'A'   ? KeyAction::select_prev
           : final_byte == 'B' ? KeyAction::select_next
                               : KeyAction::redraw;
}

KeyAction KeyMachine::lone_escape() {
    if (m_view.confirm) {
        m_view.confirm.reset();
        m_view.message = "cancelled";
        return KeyAction::redraw;
    }
    if (m_view.editing) {
        m_view.editing = false;
        m_view.draft.clear();
        m_view.filter.clear();
        return KeyAction::redraw;
    }
    if (m_view.help) {
        m_view.help = false;
        return KeyAction::redraw;
    }
    return KeyAction::quit;
}

KeyAction KeyMachine::key(unsigned char c) {
    if (c == 0x1b) {
        m_escape = Escape::escape;
        return KeyAction::none;
    }
    if (m_view.editing) {
        return edit(c);
    }
    m_view.message.clear();
    if (m_view.confirm) {
        if (c == 'y' || c == 'Y') {
            return KeyAction::confirm;
        }
        m_view.confirm.reset();
        m_view.message = "cancelled";
        return KeyAction::redraw;
    }
    switch (c) {
    case 'q':
    case 'Q':
        return KeyAction::quit;
    case 'i':
        toggle_sort(m_view, HolderSort::idle);
        break;
    case 'm':
        toggle_sort(m_view, HolderSort::memory);
        break;
    case 's':
        toggle_sort(m_view, HolderSort::sm);
        break;
    case 'u':
        toggle_sort(m_view, HolderSort::user);
        break;
    case '/':
        m_view.editing = true;
        m_view.draft.clear();
        break;
    case '?':
        m_view.help = !m_view.help;
        break;
    case 't':
        m_view.tree = !m_view.tree;
        break;
    case 'k':
        return KeyAction::ask_term;
    case 'K':
        return KeyAction::ask_kill;
    default:
        break;
    }
    return KeyAction::redraw;
}

KeyAction KeyMachine::edit(unsigned char c) {
    if (c == '\r' || c == '\n') {
        m_view.filter = m_view.draft;
        m_view.draft.clear();
        m_view.editing = false;
    } else if (c == 0x7f || c == 0x08) {
        erase_code_point(m_view.draft);
    } else if (c == 0x15) { // Ctrl-U
        m_view.draft.clear();
    } else if ((c & 0xC0) == 0x80) {
        // A UTF-8 continuation byte follows its lead byte: kept past the limit with it, dropped
        // with it.
        if (!m_drop_continuation && m_view.draft.size() < k_max_filter_bytes + 3) {
            m_view.draft += static_cast<char>(c);
        }
    } else if (c >= 0x20) {
        m_drop_continuation = m_view.draft.size() >= k_max_filter_bytes;
        if (!m_drop_continuation) {
            m_view.draft += static_cast<char>(c);
        }
    }
    return KeyAction::redraw;
}

} // namespace gua::live

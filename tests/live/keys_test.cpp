// SPDX-License-Identifier: Apache-2.0
// The keys of `gua top`: bytes in, actions and view out — sorting, the filter prompt, help, the
// quit keys, a lone Esc told apart from escape sequences, selection, the tree and the signal keys
// confirmation.
#include "live/keys.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gua::live {
namespace keys_test { // named after the file: unique in a unity batch

TEST(TopKeys, QuitKeys) {
    for (const char c : {'q', 'Q'}) {
        KeyMachine k;
        EXPECT_EQ(k.feed(c), KeyAction::quit);
    }
    KeyMachine esc;
    EXPECT_EQ(esc.feed('\x1b'), KeyAction::none) << "an Esc waits for what follows";
    EXPECT_TRUE(esc.pending());
    EXPECT_EQ(esc.timeout(), KeyAction::quit) << "nothing followed: a lone Esc";
    EXPECT_FALSE(esc.pending());
}

TEST(TopKeys, SortKeysToggleBackToTheDefault) {
    KeyMachine k;
    EXPECT_EQ(k.view().sort, HolderSort::standard);
    const std::vector<std::pair<char, HolderSort>> keys{{'i', HolderSort::idle},
                                                        {'m', HolderSort::memory},
                                                        {'s', HolderSort::sm},
                                                        {'u', HolderSort::user}};
    for (const auto& [key, sort] : keys) {
        EXPECT_EQ(k.feed(key), KeyAction::redraw);
        EXPECT_EQ(k.view().sort, sort) << key;
    }
    EXPECT_EQ(k.feed('u'), KeyAction::redraw);
    EXPECT_EQ(k.view().sort, HolderSort::standard) << "the same key again";
    EXPECT_EQ(k.feed('x'), KeyAction::redraw) << "any key redraws";
    EXPECT_EQ(k.view().sort, HolderSort::standard);
}

TEST(TopKeys, ArrowAndFunctionKeysAreIgnoredWhole) {
    KeyMachine k;
    // Up and Down select (CSI and SS3 forms); their final byte is no key.
    for (const auto& [seq, action] :
         std::vector<std::pair<std::string, KeyAction>>{{"\x1b[A", KeyAction::select_prev},
                                                        {"\x1b[B", KeyAction::select_next},
                                                        {"\x1bOA", KeyAction::select_prev},
                                                        {"\x1bOB", KeyAction::select_next}}) {
        EXPECT_EQ(k.feed(seq), action) << seq.substr(1);
        EXPECT_FALSE(k.pending()) << seq.substr(1);
        EXPECT_EQ(k.view().sort, HolderSort::standard) << "the final byte is no key";
    }
    // F1 (SS3), Page Up with a parameter, Shift+Right, Alt+q.
    for (const std::string seq : {"\x1bOP", "\x1b[5~", "\x1b[1;2C", "\x1bq"}) {
        EXPECT_EQ(k.feed(seq), KeyAction::redraw) << seq.substr(1);
        EXPECT_FALSE(k.pending()) << seq.substr(1);
        EXPECT_EQ(k.view().sort, HolderSort::standard) << "the final byte is no key";
    }
    // A sequence split across reads waits, then completes.
    EXPECT_EQ(k.feed("\x1b["), KeyAction::none);
    EXPECT_TRUE(k.pending());
    EXPECT_EQ(k.feed("D"), KeyAction::redraw);
    EXPECT_FALSE(k.pending());
    // An unfinished sequence runs out: dropped, no quit.
    EXPECT_EQ(k.feed("\x1b[1;"), KeyAction::none);
    EXPECT_EQ(k.timeout(), KeyAction::redraw);
    EXPECT_EQ(k.feed('m'), KeyAction::redraw);
    EXPECT_EQ(k.view().sort, HolderSort::memory) << "keys work again after it";
    EXPECT_EQ(k.timeout(), KeyAction::none) << "nothing pending";
}

TEST(TopKeys, EscEscQuitsOnTheFirst) {
    KeyMachine k;
    EXPECT_EQ(k.feed("\x1b\x1b"), KeyAction::quit);
}

TEST(TopKeys, FilterPrompt) {
    KeyMachine k;
    EXPECT_EQ(k.feed('/'), KeyAction::redraw);
    EXPECT_TRUE(k.view().editing);
    // Letters are text while the prompt is open: q does not quit, m does not sort.
    EXPECT_EQ(k.feed("qmx"), KeyAction::redraw);
    EXPECT_EQ(k.view().draft, "qmx");
    EXPECT_EQ(k.view().sort, HolderSort::standard);
    EXPECT_EQ(k.feed('\x7f'), KeyAction::redraw); // Backspace
    EXPECT_EQ(k.view().draft, "qm");
    EXPECT_EQ(k.feed("\x1b[C"), KeyAction::redraw) << "an arrow key adds nothing";
    EXPECT_EQ(k.view().draft, "qm");
    EXPECT_TRUE(k.view().filter.empty()) << "not applied before Enter";
    EXPECT_EQ(k.feed('\r'), KeyAction::redraw);
    EXPECT_FALSE(k.view().editing);
    EXPECT_EQ(k.view().filter, "qm");
    // A new prompt starts empty; an empty Enter clears the filter.
    k.feed('/');
    EXPECT_EQ(k.view().draft, "");
    EXPECT_EQ(k.view().filter, "qm") << "the filter holds while typing";
    k.feed('\n');
    EXPECT_EQ(k.view().filter, "");
    // Esc in the prompt clears the filter and closes the prompt instead of quitting.
    k.feed("/bob\r");
    EXPECT_EQ(k.view().filter, "bob");
    k.feed("/al");
    EXPECT_EQ(k.feed('\x1b'), KeyAction::none);
    EXPECT_EQ(k.timeout(), KeyAction::redraw);
    EXPECT_FALSE(k.view().editing);
    EXPECT_EQ(k.view().filter, "");
    EXPECT_EQ(k.view().draft, "");
    EXPECT_EQ(k.feed('q'), KeyAction::quit) << "outside the prompt q quits again";
}

TEST(TopKeys, FilterEditsWholeCodePoints) {
    KeyMachine k;
    k.feed("/zoë");
    EXPECT_EQ(k.view().draft, "zoë");
    k.feed('\x7f');
    EXPECT_EQ(k.view().draft, "zo") << "Backspace removes both bytes of ë";
    k.feed('\x15'); // Ctrl-U
    EXPECT_EQ(k.view().draft, "");
    k.feed(std::string(100, 'a'));
    EXPECT_EQ(k.view().draft.size(), 64U) << "a long paste is cut";
    k.feed("é");
    EXPECT_EQ(k.view().draft, std::string(64, 'a')) << "a code point past the limit is dropped";
}

TEST(TopKeys, HelpTogglesAndEscClosesIt) {
    KeyMachine k;
    EXPECT_EQ(k.feed('?'), KeyAction::redraw);
    EXPECT_TRUE(k.view().help);
    EXPECT_EQ(k.feed('?'), KeyAction::redraw);
    EXPECT_FALSE(k.view().help);
    k.feed('?');
    k.feed('i');
    EXPECT_TRUE(k.view().help) << "keys work under the help";
    EXPECT_EQ(k.view().sort, HolderSort::idle);
    k.feed('\x1b');
    EXPECT_EQ(k.timeout(), KeyAction::redraw);
    EXPECT_FALSE(k.view().help);
    k.feed('\x1b');
    EXPECT_EQ(k.timeout(), KeyAction::quit) << "then Esc quits";
}

TEST(TopKeys, BytesAfterAQuitAreDropped) {
    KeyMachine k;
    EXPECT_EQ(k.feed("mqu"), KeyAction::quit);
    EXPECT_EQ(k.view().sort, HolderSort::memory);
}

TEST(TopKeys, SignalKeysAskAndOnlyYConfirms) {
    KeyMachine k;
    EXPECT_EQ(k.feed('k'), KeyAction::ask_term);
    EXPECT_EQ(k.feed('K'), KeyAction::ask_kill);
    EXPECT_EQ(k.feed('y'), KeyAction::redraw) << "y is no key without a pending signal";
    // The screen sets the confirmation; y confirms it, and the screen clears it.
    k.view().confirm = TopView::Confirm{15, 4242, 7, "alice", "python"};
    EXPECT_EQ(k.feed('y'), KeyAction::confirm);
    k.view().confirm.reset();
    for (const std::string cancel : {"n", "q", "k", " ", "\x1b[A"}) {
        k.view().confirm = TopView::Confirm{9, 4242, 7, "alice", "python"};
        EXPECT_EQ(k.feed(cancel), KeyAction::redraw) << cancel;
        EXPECT_FALSE(k.view().confirm) << "any other key cancels: " << cancel;
        EXPECT_EQ(k.view().message, "cancelled");
    }
    k.view().confirm = TopView::Confirm{9, 4242, 7, "alice", "python"};
    k.feed('\x1b');
    EXPECT_EQ(k.timeout(), KeyAction::redraw) << "Esc cancels, not quits";
    EXPECT_FALSE(k.view().confirm);
    EXPECT_EQ(k.feed('x'), KeyAction::redraw);
    EXPECT_EQ(k.view().message, "") << "the message lasts until the next key";
}

TEST(TopKeys, TTogglesTheTree) {
    KeyMachine k;
    EXPECT_EQ(k.feed('t'), KeyAction::redraw);
    EXPECT_TRUE(k.view().tree);
    k.feed('t');
    EXPECT_FALSE(k.view().tree);
}

} // namespace keys_test
} // namespace gua::live

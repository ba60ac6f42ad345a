// SPDX-License-Identifier: Apache-2.0
// printable(): what reaches a terminal from names other people chose.
#include "core/printable.hpp"

#include <gtest/gtest.h>

namespace gua {
namespace {

TEST(Printable, PassesPrintableAsciiAndUtf8) {
    EXPECT_EQ(printable("python train.py --lr 3e-4"), "python train.py --lr 3e-4");
    EXPECT_EQ(printable("jürgen 日本 🚀"), "jürgen 日本 🚀");
    EXPECT_EQ(printable(""), "");
}

TEST(Printable, EscapesEveryControlCharacter) {
    // ESC [ 2 J clears the screen; OSC 52 writes the clipboard; BEL, CR, LF, TAB, DEL.
    EXPECT_EQ(printable("\x1b[2Jevil"), "\\x1b[2Jevil");
    EXPECT_EQ(printable("\x1b]52;c;aGk=\a"), "\\x1b]52;c;aGk=\\x07");
    EXPECT_EQ(printable("a\rb\nc\td\x7f"), "a\\x0db\\x0ac\\x09d\\x7f");
    EXPECT_EQ(printable(std::string("x\0y", 3)), "x\\x00y");
    // C1 controls encoded in UTF-8: U+009B is CSI on terminals that honour 8-bit controls.
    EXPECT_EQ(printable("\xc2\x9b"
                        "31m"),
              "\\xc2\\x9b31m");
    EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0") << "U+00A0 is the first printable after C1";
}

TEST(Printable, EscapesInvalidUtf8ByteByByte) {
    EXPECT_EQ(printable("\x9b"), "\\x9b");                   // a lone C1 byte (Latin-1 CSI)
    EXPECT_EQ(printable("\xe6\x97"), "\\xe6\\x97");          // truncated sequence
    EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
    EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // beyond U+10FFFF
}

TEST(Printable, BackslashesCannotForgeAnEscape) {
    EXPECT_EQ(printable("\\x1b"), "\\\\x1b");
    EXPECT_NE(printable("\\x1b"), printable("\x1b"));
}

TEST(TerminalText, KeepsLinesAndGuasColoursOnly) {
    EXPECT_EQ(terminal_text("a\\b\nc\td", false), "a\\b\nc\\x09d");
    EXPECT_EQ(terminal_text("\x1b[32mok\x1b[0m", true), "\x1b[32mok\x1b[0m");
    EXPECT_EQ(terminal_text("\x1b[32mok", false), "\\x1b[32mok");
    // Only SGR passes: cursor movement, screen clearing and OSC do not.
    EXPECT_EQ(terminal_text("\x1b[2J\x1b]0;t\a\x1b[1;1H", true),
              "\\x1b[2J\\x1b]0;t\\x07\\x1b[1;1H");
    EXPECT_EQ(terminal_text("\x1b[", true), "\\x1b[");
    EXPECT_EQ(terminal_text("jürgen \xff", true), "jürgen \\xff");
}

TEST(ValidUtf8, ReplacesEachInvalidByte) {
    EXPECT_EQ(valid_utf8("ok ü"), "ok ü");
    EXPECT_EQ(valid_utf8("a\xff\xfe"
                         "b"),
              "a\xef\xbf\xbd\xef\xbf\xbd"
              "b");
    EXPECT_EQ(valid_utf8("\xe6\x97"), "\xef\xbf\xbd\xef\xbf\xbd");
    EXPECT_EQ(valid_utf8("\x1b\n"), "\x1b\n");
}

TEST(HtmlText, RemovesControlsAndRepairsUtf8) {
    EXPECT_EQ(html_text("a\x1b[2Jb\a\x7f\tc\nd\r"), "a[2Jb\tc\nd\r");
    EXPECT_EQ(html_text("\xc2\x9b"
                        "31m\xc2\xa0"),
              "31m\xc2\xa0");
    EXPECT_EQ(html_text("x\xffy"), "x\xef\xbf\xbdy");
}

TEST(SpreadsheetSafe, NeutralisesFormulaLeadsButNotNumbers) {
    for (const char* formula : {"=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\tx", "\rx",
                                "-", "+", "=", "-1e", "-.5"}) {
        EXPECT_EQ(spreadsheet_safe(formula), std::string("'") + formula) << formula;
    }
    for (const char* plain : {"", "alice", "-12.34", "-1", "-1e-3", "-2E+10", "0", "a=b", "'x"}) {
        EXPECT_EQ(spreadsheet_safe(plain), plain) << plain;
    }
}

} // namespace
} // namespace gua

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

} // namespace
} // namespace gua

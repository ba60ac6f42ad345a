// SPDX-License-Identifier: Apache-2.0
// Text that other people chose (process names, container ids, user names) made safe for a
// terminal: control characters and invalid UTF-8 are shown escaped, never sent as they are.
#pragma once

#include <string>
#include <string_view>

namespace gua {

/// Returns `text` with every byte that a terminal could interpret escaped as `\xNN`: C0 controls
/// (including ESC, CR, LF and TAB), DEL, C1 controls (U+0080–U+009F) and bytes that are not
/// part of valid UTF-8. Printable ASCII and valid UTF-8 of other code points pass unchanged; a
/// backslash is doubled so that escapes cannot be forged.
std::string printable(std::string_view text);

} // namespace gua

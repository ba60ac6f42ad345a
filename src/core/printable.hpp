// SPDX-License-Identifier: Apache-2.0
// Text that other people chose (process names, user names, container ids, Prometheus labels) made
// safe at each output: a terminal, an HTML page, a spreadsheet or a JSON document.
#pragma once

#include <string>
#include <string_view>

namespace gua {

/// Returns `text` with every byte that a terminal could interpret escaped as `\xNN`: C0 controls
/// (including ESC, CR, LF and TAB), DEL, C1 controls (U+0080–U+009F) and bytes that are not
/// part of valid UTF-8. Printable ASCII and valid UTF-8 of other code points pass unchanged; a
/// backslash is doubled so that escapes cannot be forged. For one name.
std::string printable(std::string_view text);

/// A whole rendered text (a report, a screen) at the terminal boundary: escaped as printable()
/// does, except that line feeds and backslashes pass unchanged and, when `color` is true, the
/// colour sequences gua writes itself (ESC '[' digits 'm', SGR) pass too.
std::string terminal_text(std::string_view text, bool color);

/// `text` as valid UTF-8: every byte that is not part of a valid sequence becomes U+FFFD.
std::string valid_utf8(std::string_view text);

/// Text for an HTML page: valid_utf8(), with C0 controls other than TAB, LF and CR, DEL and C1
/// controls removed. Markup is escaped separately.
std::string html_text(std::string_view text);

/// One CSV field made safe for spreadsheets (OWASP "CSV injection"): a field that begins with
/// '=', '+', '-', '@', TAB or CR and is not a plain decimal number gets a leading apostrophe, so
/// a spreadsheet shows it as text instead of evaluating a formula.
std::string spreadsheet_safe(std::string_view field);

} // namespace gua

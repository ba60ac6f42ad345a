// SPDX-License-Identifier: Apache-2.0
// Headless Chromium (Debian's `chromium`) for the HTML report's tests: the DOM after load and the
// page's console lines.
#pragma once

#include <string>
#include <vector>

namespace gua::test {

/// The chromium command, or "" when Debian's chromium is not installed (tests then skip).
std::string chromium_binary();

/// What headless Chromium made of a page.
struct LoadedPage {
    int exit_code = -1;
    std::string dom;                  ///< the serialized DOM after load (--dump-dom)
    std::vector<std::string> console; ///< stderr lines of the page's console (":CONSOLE")
    std::string err;                  ///< all of stderr
};

/// Loads the local file `html_path` (absolute) in headless Chromium with a fresh profile in
/// `profile_dir`, at most 120 s.
LoadedPage load_in_chromium(const std::string& html_path, const std::string& profile_dir);

} // namespace gua::test

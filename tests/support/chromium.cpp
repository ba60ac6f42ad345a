// SPDX-License-Identifier: Apache-2.0
// Runs Debian 12's chromium headless: --no-sandbox (tests may run as root),
// --disable-gpu, console lines on stderr with --enable-logging=stderr --v=0.
#include "support/chromium.hpp"

#include "support/run.hpp"

#include <filesystem>
#include <sstream>

namespace gua::test {

std::string chromium_binary() {
    std::error_code ec;
    return std::filesystem::exists("/usr/bin/chromium", ec) ? "/usr/bin/chromium" : "";
}

LoadedPage load_in_chromium(const std::string& html_path, const std::string& profile_dir) {
    const RunResult r =
        run("/usr/bin/timeout",
            {"120", chromium_binary(), "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--user-data-dir=" + profile_dir, "--enable-logging=stderr", "--v=0",
             "--dump-dom", "file://" + html_path});
    LoadedPage page{r.exit_code, r.out, {}, r.err};
    std::istringstream lines(r.err);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.find(":CONSOLE") != std::string::npos) {
            page.console.push_back(line);
        }
    }
    return page;
}

} // namespace gua::test

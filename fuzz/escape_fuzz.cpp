// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the escapers at gua's output boundaries (src/core/printable.hpp). Whatever the
// bytes, the text forms hold no control character a terminal acts on, JSON, HTML and text are
// valid UTF-8, and a CSV field never begins a formula.
#include "core/printable.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

bool valid_utf8(const std::string& s) {
    try {
        (void)nlohmann::json(s).dump(); // the strict handler throws on invalid UTF-8
        return true;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

/// No C0 control but those in `allowed`, no DEL, no C1 control (UTF-8 C2 80–C2 9F).
bool no_controls(const std::string& s, std::string_view allowed) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c < 0x20 && allowed.find(static_cast<char>(c)) == std::string_view::npos) ||
            c == 0x7f) {
            return false;
        }
        if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
            return false;
        }
    }
    return true;
}

/// Every ESC starts an SGR sequence: ESC '[' digits or ';' 'm'.
bool only_sgr(const std::string& s) {
    for (std::size_t i = s.find('\x1b'); i != std::string::npos; i = s.find('\x1b', i + 1)) {
        if (i + 2 >= s.size() || s[i + 1] != '[') {
            return false;
        }
        std::size_t k = i + 2;
        while (k < s.size() && ((s[k] >= '0' && s[k] <= '9') || s[k] == ';')) {
            ++k;
        }
        if (k >= s.size() || s[k] != 'm') {
            return false;
        }
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);

    const std::string name = gua::printable(in);
    require(no_controls(name, "") && valid_utf8(name));

    const std::string plain = gua::terminal_text(in, false);
    require(no_controls(plain, "\n") && valid_utf8(plain));
    const std::string coloured = gua::terminal_text(in, true);
    require(no_controls(coloured, "\n\x1b") && only_sgr(coloured) && valid_utf8(coloured));

    const std::string repaired = gua::valid_utf8(in);
    require(valid_utf8(repaired));
    require(!valid_utf8(std::string(in)) || repaired == in);

    const std::string html = gua::html_text(in);
    require(no_controls(html, "\t\n\r") && valid_utf8(html));

    const std::string field = gua::spreadsheet_safe(in);
    require(field == in || field == "'" + std::string(in));
    if (!field.empty() && field != in) {
        require(std::string_view("=+-@\t\r").find(in.front()) != std::string_view::npos);
    }
    if (field == in && !in.empty() && in.front() != '-') {
        require(std::string_view("=+@\t\r").find(in.front()) == std::string_view::npos);
    }
    return 0;
}

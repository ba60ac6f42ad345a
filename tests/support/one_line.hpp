// SPDX-License-Identifier: Apache-2.0
// Text comparisons that ignore how a report wrapped its lines.
#pragma once

#include <cctype>
#include <string>

namespace gua::test {

/// `text` with every run of whitespace as one space (the text report wraps its lines).
inline std::string one_line(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (!std::isspace(static_cast<unsigned char>(c))) {
            out += c;
        } else if (!out.empty() && out.back() != ' ') {
            out += ' ';
        }
    }
    return out;
}

} // namespace gua::test

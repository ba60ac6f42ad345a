// SPDX-License-Identifier: Apache-2.0
// Escaping of untrusted text for terminal output.
#include "core/printable.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace gua {
namespace {

/// Length of the valid UTF-8 sequence starting at `s[i]` (2–4), or 0 when there is none.
std::size_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& code_point) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    std::size_t n = 0;
    std::uint32_t min = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
        min = 0x80;
        code_point = lead & 0x1FU;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        min = 0x800;
        code_point = lead & 0x0FU;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        min = 0x10000;
        code_point = lead & 0x07U;
    } else {
        return 0;
    }
    if (i + n > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0U) != 0x80U) {
            return 0;
        }
        code_point = (code_point << 6U) | (byte(i + k) & 0x3FU);
    }
    const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
    if (code_point < min || code_point > 0x10FFFF || surrogate) {
        return 0;
    }
    return n;
}

void escape(std::string& out, std::string_view bytes) {
    for (const char c : bytes) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
}

/// What to do with each kind of byte sequence.
struct Rules {
    bool double_backslash = true; ///< "\\" → "\\\\"
    bool pass_newline = false;    ///< '\n' passes
    bool pass_sgr = false;        ///< ESC '[' digits/';' 'm' passes
};

/// Length of an SGR sequence (ESC '[' [0-9;]* 'm') at `s[i]`, 0 when there is none.
std::size_t sgr_length(std::string_view s, std::size_t i) {
    if (i + 2 >= s.size() || s[i] != '\x1b' || s[i + 1] != '[') {
        return 0;
    }
    for (std::size_t k = i + 2; k < s.size() && k < i + 32; ++k) {
        if (s[k] == 'm') {
            return k + 1 - i;
        }
        if ((s[k] < '0' || s[k] > '9') && s[k] != ';') {
            return 0;
        }
    }
    return 0;
}

std::string escaped(std::string_view text, const Rules& rules) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t sgr = rules.pass_sgr ? sgr_length(text, i) : 0;
        if (sgr > 0) {
            out += text.substr(i, sgr);
            i += sgr;
        } else if (c == '\\' && rules.double_backslash) {
            out += "\\\\";
            ++i;
        } else if ((c >= 0x20 && c < 0x7F) || (c == '\n' && rules.pass_newline)) {
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x80) {
            escape(out, text.substr(i, 1)); // C0 control or DEL
            ++i;
        } else {
            std::uint32_t code_point = 0;
            const std::size_t n = utf8_length(text, i, code_point);
            if (n == 0) {
                escape(out, text.substr(i, 1));
                ++i;
            } else if (code_point <= 0x9F) {
                escape(out, text.substr(i, n)); // C1 control
                i += n;
            } else {
                out += text.substr(i, n);
                i += n;
            }
        }
    }
    return out;
}

/// valid_utf8() with C0 (but TAB, LF, CR), DEL and C1 controls removed when `strip_controls`.
std::string repaired(std::string_view text, bool strip_controls) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            const bool control = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
            if (!(strip_controls && control)) {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        std::uint32_t code_point = 0;
        const std::size_t n = utf8_length(text, i, code_point);
        if (n == 0) {
            out += "\xef\xbf\xbd"; // U+FFFD REPLACEMENT CHARACTER
            ++i;
            continue;
        }
        if (!(strip_controls && code_point <= 0x9F)) {
            out += text.substr(i, n);
        }
        i += n;
    }
    return out;
}

/// A plain decimal number: -?digits[.digits][e[+-]digits].
bool plain_number(std::string_view s) {
    std::size_t i = s.starts_with('-') ? 1 : 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            ++i;
        }
        return i > from;
    };
    if (!digits()) {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (!digits()) {
            return false;
        }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
            ++i;
        }
        if (!digits()) {
            return false;
        }
    }
    return i == s.size();
}

} // namespace

std::string printable(std::string_view text) {
    return escaped(text, Rules{});
}

std::string terminal_text(std::string_view text, bool color) {
    return escaped(text, Rules{false, true, color});
}

std::string valid_utf8(std::string_view text) {
    return repaired(text, false);
}

std::string html_text(std::string_view text) {
    return repaired(text, true);
}

std::string spreadsheet_safe(std::string_view field) {
    if (field.empty() || std::string_view("=+-@\t\r").find(field.front()) == std::string::npos ||
        plain_number(field)) {
        return std::string(field);
    }
    return "'" + std::string(field);
}

} // namespace gua

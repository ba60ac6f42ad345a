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

} // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\\') {
            out += "\\\\";
            ++i;
        } else if (c >= 0x20 && c < 0x7F) {
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

} // namespace gua

// SPDX-License-Identifier: Apache-2.0
// Mail messages: headers (date, encoded subject) and base64 MIME parts.
#include "notify/mime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <random>

namespace gua::notify {

namespace {

constexpr std::string_view k_b64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `text` with every line end made CRLF (RFC 2045's canonical form of text).
std::string crlf(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 40);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) {
            out += '\r';
        }
        out += text[i];
    }
    return out;
}

/// Base64 of `bytes` in lines of 76 characters, each ending in CRLF.
std::string base64_lines(std::string_view bytes) {
    const std::string all = base64(bytes);
    std::string out;
    for (std::size_t i = 0; i < all.size(); i += 76) {
        out += all.substr(i, 76);
        out += "\r\n";
    }
    return out;
}

std::string mime_part(const char* type, std::string_view body) {
    return fmt::format("Content-Type: {}; charset=utf-8\r\nContent-Transfer-Encoding: "
                       "base64\r\n\r\n{}",
                       type, base64_lines(crlf(body)));
}

std::string random_hex(int digits) {
    std::random_device rd;
    std::string out;
    while (static_cast<int>(out.size()) < digits) {
        out += fmt::format("{:08x}", rd());
    }
    return out.substr(0, static_cast<std::size_t>(digits));
}

} // namespace

std::string base64(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                                  static_cast<unsigned char>(bytes[i + 1]) << 8 |
                                                  static_cast<unsigned char>(bytes[i + 2]));
        out += k_b64[n >> 18 & 63];
        out += k_b64[n >> 12 & 63];
        out += k_b64[n >> 6 & 63];
        out += k_b64[n & 63];
    }
    if (i < bytes.size()) {
        const bool two = i + 1 < bytes.size();
        const auto n =
            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                       (two ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0));
        out += k_b64[n >> 18 & 63];
        out += k_b64[n >> 12 & 63];
        out += two ? k_b64[n >> 6 & 63] : '=';
        out += '=';
    }
    return out;
}

std::string encode_header_text(std::string_view subject) {
    const bool plain = std::all_of(subject.begin(), subject.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
    });
    if (plain) {
        return std::string(subject);
    }
    // 45 bytes make 60 base64 characters: "=?UTF-8?B?" + 60 + "?=" is 72, under 75.
    std::string out;
    std::size_t i = 0;
    while (i < subject.size()) {
        std::size_t end = std::min(subject.size(), i + 45);
        while (end < subject.size() && end > i &&
               (static_cast<unsigned char>(subject[end]) & 0xC0) == 0x80) {
            --end; // a continuation byte: end the word before its character
        }
        out += (out.empty() ? "" : "\r\n ") +
               fmt::format("=?UTF-8?B?{}?=", base64(subject.substr(i, end - i)));
        i = end;
    }
    return out;
}

std::string mail_date(TimeUs t) {
    static constexpr std::array<const char*, 7> days{"Sun", "Mon", "Tue", "Wed",
                                                     "Thu", "Fri", "Sat"};
    static constexpr std::array<const char*, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const std::time_t s = static_cast<std::time_t>(t / k_us_per_second);
    std::tm tm{};
    ::gmtime_r(&s, &tm);
    return fmt::format("{}, {:02} {} {} {:02}:{:02}:{:02} +0000", days.at(tm.tm_wday), tm.tm_mday,
                       months.at(tm.tm_mon), tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string new_message_id(const std::string& from, TimeUs now) {
    const std::size_t at = from.rfind('@');
    const std::string domain = at == std::string::npos ? "localhost" : from.substr(at + 1);
    return fmt::format("{:x}.{}@{}", now, random_hex(16), domain);
}

std::string mail_message(const MailParts& p) {
    std::string out =
        fmt::format("Date: {}\r\nMessage-ID: <{}>\r\nFrom: {}\r\nTo: {}\r\n"
                    "Subject: {}\r\nMIME-Version: 1.0\r\n"
                    "Auto-Submitted: auto-generated\r\n",
                    mail_date(p.date), p.message_id, p.from, p.to, encode_header_text(p.subject));
    if (p.html.empty()) {
        return out + mime_part("text/plain", p.text);
    }
    out += fmt::format("Content-Type: multipart/alternative; boundary=\"{}\"\r\n\r\n", p.boundary);
    out += fmt::format("--{}\r\n{}", p.boundary, mime_part("text/plain", p.text));
    out += fmt::format("--{}\r\n{}", p.boundary, mime_part("text/html", p.html));
    out += fmt::format("--{}--\r\n", p.boundary);
    return out;
}

} // namespace gua::notify

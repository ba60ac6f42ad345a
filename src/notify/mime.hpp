// SPDX-License-Identifier: Apache-2.0
// An RFC 5322 mail message: Date, Message-ID, From, To, Subject (RFC 2047 encoded when not
// ASCII) and a MIME body, text alone or multipart/alternative text + HTML, base64 parts.
#pragma once

#include "core/time.hpp"

#include <string>
#include <string_view>

namespace gua::notify {

/// Base64 of `bytes` (RFC 4648), one line.
std::string base64(std::string_view bytes);

/// `subject` as a header value: itself when printable ASCII, else RFC 2047 "B" encoded words of
/// UTF-8 (at most 75 characters each, folded onto continuation lines, never splitting a
/// character).
std::string encode_header_text(std::string_view subject);

/// `t` as an RFC 5322 date in UTC, e.g. "Sun, 29 Nov 2026 18:50:00 +0000".
std::string mail_date(TimeUs t);

/// What a message is made of.
struct MailParts {
    std::string from;
    std::string to;
    std::string subject;
    std::string text;
    std::string html;       ///< empty: a text/plain message
    std::string message_id; ///< without the angle brackets, e.g. "1a2b.3c4d@example.org"
    std::string boundary;   ///< the multipart boundary (never in base64 output)
    TimeUs date = 0;
};

/// The whole message with CRLF line ends, ready for SMTP's DATA.
std::string mail_message(const MailParts& parts);

/// A fresh message id "<time>.<random>@<domain of from>" (without brackets).
std::string new_message_id(const std::string& from, TimeUs now);

} // namespace gua::notify

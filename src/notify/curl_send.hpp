// SPDX-License-Identifier: Apache-2.0
// The two transfers the transports make through libcurl: an SMTP submission and an HTTP(S) POST
// of JSON. Errors are one line without secrets (no password, no webhook path or query).
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <atomic>
#include <string>
#include <vector>

namespace gua::notify {

/// `url` with everything after the host and port replaced by "…", e.g.
/// "https://hooks.slack.com/…" (webhook URLs carry their token in the path).
std::string redact_url(const std::string& url);

/// One SMTP submission.
struct SmtpRequest {
    std::string url; ///< smtp://host:port or smtps://host:port
    bool starttls = true;
    std::string username; ///< empty: no AUTH
    std::string password;
    std::string ca_file;
    std::string from;
    std::vector<std::string> to;
    std::string message; ///< the whole RFC 5322 message, CRLF line ends
    DurationUs timeout_us = 30 * k_us_per_second;
    const std::atomic<bool>* cancel = nullptr; ///< set: the transfer stops soon
};

/// Sends `r`; an error says what failed ("STARTTLS refused", "login denied (535 …)", …).
Result<void> smtp_send(const SmtpRequest& r);

/// One HTTP(S) POST of a JSON body; any answer but 2xx is an error.
struct PostRequest {
    std::string url;
    std::string body;
    std::string ca_file;
    DurationUs timeout_us = 30 * k_us_per_second;
    const std::atomic<bool>* cancel = nullptr;
};

/// Posts `r`; an error names the redacted URL and the status or transfer error.
Result<void> http_post(const PostRequest& r);

} // namespace gua::notify

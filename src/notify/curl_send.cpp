// SPDX-License-Identifier: Apache-2.0
// SMTP and HTTP POST through the shared libcurl loader, with cancellation and scrubbed errors.
#include "notify/curl_send.hpp"

#include "core/curl_api.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

namespace gua::notify {

namespace {

constexpr const char* k_feature = "mail and webhook delivery";

/// An easy handle and a header/recipient list, released together.
struct Transfer {
    const CurlApi& api = curl_api(k_feature);
    CURL* curl = api.easy_init();
    curl_slist* list = nullptr;
    std::array<char, CURL_ERROR_SIZE> error{};
    Transfer() = default;
    ~Transfer() {
        if (list != nullptr) {
            api.slist_free_all(list);
        }
        if (curl != nullptr) {
            api.easy_cleanup(curl);
        }
    }
    Transfer(const Transfer&) = delete;
    Transfer& operator=(const Transfer&) = delete;
};

struct Upload {
    const std::string* data = nullptr;
    std::size_t offset = 0;
};

std::size_t read_upload(char* out, std::size_t size, std::size_t count, void* user) {
    auto* u = static_cast<Upload*>(user);
    const std::size_t n = std::min(size * count, u->data->size() - u->offset);
    std::memcpy(out, u->data->data() + u->offset, n);
    u->offset += n;
    return n;
}

std::size_t keep_answer(char* data, std::size_t size, std::size_t count, void* user) {
    auto* answer = static_cast<std::string*>(user);
    const std::size_t n = size * count;
    answer->append(data, std::min(n, 512 - std::min<std::size_t>(answer->size(), 512)));
    return n;
}

int check_cancel(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* cancel = static_cast<const std::atomic<bool>*>(user);
    return cancel != nullptr && cancel->load() ? 1 : 0;
}

/// The options every transfer shares: timeouts, no signals, cancellation, CA file, errors.
void common_options(Transfer& t, DurationUs timeout_us, const std::string& ca_file,
                    const std::atomic<bool>* cancel, const char* protocols) {
    const CurlApi& a = t.api;
    a.easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
    a.easy_setopt(t.curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_us / k_us_per_ms));
    a.easy_setopt(t.curl, CURLOPT_ERRORBUFFER, t.error.data());
    a.easy_setopt(t.curl, CURLOPT_PROTOCOLS_STR, protocols);
    a.easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
    a.easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, &check_cancel);
    a.easy_setopt(t.curl, CURLOPT_XFERINFODATA, cancel);
    if (!ca_file.empty()) {
        a.easy_setopt(t.curl, CURLOPT_CAINFO, ca_file.c_str());
    }
}

/// curl's error for `code`: its message and the detail of the error buffer, without `secret`
/// (which a message might quote).
std::string transfer_error(const Transfer& t, CURLcode code, const std::string& secret) {
    std::string detail(t.error.data(), strnlen(t.error.data(), t.error.size()));
    // The buffer's detail is the more specific ("Failed to connect to … port 25 after 3 ms:
    // Couldn't connect to server"); without one, the code's message ("Login denied").
    std::string out = detail.empty() ? std::string(t.api.easy_strerror(code)) : detail;
    for (std::size_t at = 0; !secret.empty() && (at = out.find(secret)) != std::string::npos;) {
        out.replace(at, secret.size(), "…");
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
        out.pop_back();
    }
    return printable(out);
}

} // namespace

std::string redact_url(const std::string& url) {
    const std::size_t scheme = url.find("://");
    const std::size_t host = scheme == std::string::npos ? 0 : scheme + 3;
    const std::size_t end = url.find_first_of("/?#", host);
    if (end == std::string::npos) {
        return url;
    }
    return url.substr(0, end) + "/…";
}

Result<void> smtp_send(const SmtpRequest& r) {
    Transfer t;
    if (t.curl == nullptr) {
        return Error{"cannot start a libcurl transfer"};
    }
    const CurlApi& a = t.api;
    common_options(t, r.timeout_us, r.ca_file, r.cancel, "smtp,smtps");
    a.easy_setopt(t.curl, CURLOPT_URL, r.url.c_str());
    a.easy_setopt(t.curl, CURLOPT_USE_SSL,
                  static_cast<long>(r.starttls ? CURLUSESSL_ALL : CURLUSESSL_NONE));
    if (!r.username.empty()) {
        a.easy_setopt(t.curl, CURLOPT_USERNAME, r.username.c_str());
        a.easy_setopt(t.curl, CURLOPT_PASSWORD, r.password.c_str());
    }
    const std::string from = "<" + r.from + ">";
    a.easy_setopt(t.curl, CURLOPT_MAIL_FROM, from.c_str());
    for (const std::string& to : r.to) {
        t.list = a.slist_append(t.list, ("<" + to + ">").c_str());
    }
    a.easy_setopt(t.curl, CURLOPT_MAIL_RCPT, t.list);
    Upload upload{&r.message, 0};
    a.easy_setopt(t.curl, CURLOPT_READFUNCTION, &read_upload);
    a.easy_setopt(t.curl, CURLOPT_READDATA, &upload);
    a.easy_setopt(t.curl, CURLOPT_UPLOAD, 1L);
    a.easy_setopt(t.curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.message.size()));
    const CURLcode code = a.easy_perform(t.curl);
    if (code != CURLE_OK) {
        return Error{transfer_error(t, code, r.password)};
    }
    return {};
}

Result<void> http_post(const PostRequest& r) {
    Transfer t;
    if (t.curl == nullptr) {
        return Error{"cannot start a libcurl transfer"};
    }
    const CurlApi& a = t.api;
    common_options(t, r.timeout_us, r.ca_file, r.cancel, "http,https");
    a.easy_setopt(t.curl, CURLOPT_URL, r.url.c_str());
    t.list = a.slist_append(t.list, "Content-Type: application/json; charset=utf-8");
    a.easy_setopt(t.curl, CURLOPT_HTTPHEADER, t.list);
    a.easy_setopt(t.curl, CURLOPT_POSTFIELDS, r.body.data());
    a.easy_setopt(t.curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    std::string answer;
    a.easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, &keep_answer);
    a.easy_setopt(t.curl, CURLOPT_WRITEDATA, &answer);
    const CURLcode code = a.easy_perform(t.curl);
    const std::string where = redact_url(r.url);
    if (code != CURLE_OK) {
        const std::size_t path = r.url.find('/', r.url.find("://") + 3);
        return Error{fmt::format(
            "{}: {}", where,
            transfer_error(t, code, path == std::string::npos ? r.url : r.url.substr(path)))};
    }
    long status = 0;
    a.easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) {
        const std::string excerpt = printable(answer.substr(0, 100));
        return Error{fmt::format("{}: HTTP {}{}", where, status,
                                 excerpt.empty() ? "" : " (" + excerpt + ")")};
    }
    return {};
}

} // namespace gua::notify

// SPDX-License-Identifier: Apache-2.0
// Mail and webhook transports over notify/curl_send.hpp.
#include "notify/transport.hpp"

#include "core/fatal.hpp"
#include "core/time.hpp"
#include "notify/curl_send.hpp"
#include "notify/mime.hpp"
#include "notify/payload.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gua::notify {

namespace {

class MailTransport final : public Transport {
  public:
    MailTransport(config::MailSettings s, std::string password)
        : Transport("smtp", s.audience), m_settings(std::move(s)), m_password(std::move(password)) {
    }
    bool takes(const Notice& n) const override { return !n.address.empty(); }
    std::string target(const Notice& n) const override {
        return fmt::format("{} (mail via {})", n.address, redact_url(m_settings.url));
    }
    Result<void> send(const Notice& n, const std::atomic<bool>* cancel) const override {
        MailParts p;
        p.from = m_settings.from;
        p.to = n.address;
        p.subject = n.subject;
        p.text = n.text;
        p.html = n.html;
        p.date = wall_now();
        p.message_id = new_message_id(m_settings.from, p.date);
        p.boundary = "=_gua_" + p.message_id.substr(0, p.message_id.find('@'));
        SmtpRequest r;
        r.url = m_settings.url;
        r.starttls = m_settings.starttls && m_settings.url.starts_with("smtp://");
        r.username = m_settings.username;
        r.password = m_password;
        r.ca_file = m_settings.ca_file;
        r.from = m_settings.from;
        r.to = {n.address};
        r.message = mail_message(p);
        r.timeout_us = m_settings.timeout_us;
        r.cancel = cancel;
        if (Result<void> sent = smtp_send(r); !sent) {
            return Error{fmt::format("mail to {} via {}: {}", n.address, redact_url(r.url),
                                     sent.error().message)};
        }
        return {};
    }

  private:
    config::MailSettings m_settings;
    std::string m_password;
};

class WebhookTransport final : public Transport {
  public:
    WebhookTransport(const config::WebhookSettings& s, std::string url)
        : Transport("webhook." + s.name, s.audience), m_settings(s), m_url(std::move(url)) {}
    bool takes(const Notice&) const override { return true; }
    std::string target(const Notice&) const override {
        return fmt::format("{} ({}, {})", label(), m_settings.kind, redact_url(m_url));
    }
    Result<void> send(const Notice& n, const std::atomic<bool>* cancel) const override {
        PostRequest r;
        r.url = m_url;
        r.body = webhook_payload(m_settings.kind, n)
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        r.ca_file = m_settings.ca_file;
        r.timeout_us = m_settings.timeout_us;
        r.cancel = cancel;
        if (Result<void> sent = http_post(r); !sent) {
            return Error{fmt::format("{}: {}", label(), sent.error().message)};
        }
        return {};
    }

  private:
    config::WebhookSettings m_settings;
    std::string m_url;
};

std::string secret_or_fatal(const std::string& key, const std::string& path) {
    Result<std::string> s = read_secret(key, path);
    if (!s) {
        throw Fatal(s.error().message, ExitCode::usage);
    }
    return std::move(s).value();
}

} // namespace

Result<std::string> read_secret(const std::string& key, const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return Error{fmt::format("{} {}: cannot read: {}", key, path, std::strerror(errno))};
    }
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
        line.pop_back();
    }
    if (line.empty()) {
        return Error{
            fmt::format("{} {}: empty (expected the secret on its first line)", key, path)};
    }
    return line;
}

TransportList make_transports(const config::DeliverySettings& settings) {
    TransportList out;
    if (settings.mail) {
        const config::MailSettings& m = *settings.mail;
        const std::string password =
            m.password_file.empty() ? "" : secret_or_fatal("mail.password_file", m.password_file);
        out.push_back(std::make_shared<MailTransport>(m, password));
    }
    for (const config::WebhookSettings& w : settings.webhooks) {
        const std::string key = "webhook." + w.name + ".url_file";
        const std::string url = w.url_file.empty() ? w.url : secret_or_fatal(key, w.url_file);
        if (!url.starts_with("http://") && !url.starts_with("https://")) {
            throw Fatal(fmt::format("{} {}: expected an http:// or https:// URL on its first line",
                                    key, w.url_file),
                        ExitCode::usage);
        }
        out.push_back(std::make_shared<WebhookTransport>(w, url));
    }
    return out;
}

} // namespace gua::notify

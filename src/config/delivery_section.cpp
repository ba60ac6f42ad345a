// SPDX-License-Identifier: Apache-2.0
// [mail], [webhook.NAME], [delivery]: the transports of digests and policy notifications.
#include "config/delivery_section.hpp"

#include "config/toml_errors.hpp"
#include "core/duration.hpp"

#include <algorithm>

namespace gua::config {
namespace {

bool has_control(const std::string& s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

/// The string at `key` of `table` into `out`: non-empty, one line. Absent keys leave `out`.
Result<void> delivery_text(const std::string& path, const toml::table& table, const char* key,
                           const std::string& full, const char* example, std::string& out) {
    const toml::node* n = table.get(key);
    if (n == nullptr) {
        return {};
    }
    const std::optional<std::string> v = n->value<std::string>();
    if (!v || v->empty() || has_control(*v)) {
        return at(path, *n, full, fmt::format("expected a string on one line, e.g. {}", example));
    }
    out = *v;
    return {};
}

Result<void> delivery_timeout(const std::string& path, const toml::table& table,
                              const std::string& full, DurationUs& out) {
    const toml::node* n = table.get("timeout");
    if (n == nullptr) {
        return {};
    }
    const std::optional<std::string> v = n->value<std::string>();
    const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{""});
    if (!d || d.value() > 10 * k_us_per_minute) {
        return at(path, *n, full, "expected a duration up to 10m, e.g. \"30s\"");
    }
    out = d.value();
    return {};
}

Result<void> delivery_audience(const std::string& path, const toml::table& table,
                               const std::string& full, Audience& out) {
    const toml::node* n = table.get("for");
    if (n == nullptr) {
        return {};
    }
    const std::optional<std::string> v = n->value<std::string>();
    if (v == "digest") {
        out = Audience::digest;
    } else if (v == "policy") {
        out = Audience::policy;
    } else if (v == "both") {
        out = Audience::both;
    } else {
        return at(path, *n, full, "expected \"digest\", \"policy\" or \"both\"");
    }
    return {};
}

/// The host part of `url` after `scheme`: non-empty, up to the first '/', '?' or '#'.
bool has_host(const std::string& url, std::string_view scheme) {
    const std::string rest = url.substr(scheme.size());
    return !rest.empty() && rest.front() != '/' && rest.front() != ':' &&
           rest.find_first_of(" \t") == std::string::npos;
}

Result<void> check_mail(const std::string& path, const toml::table& t, const MailSettings& m) {
    const auto& node = [&t](const char* key) -> const toml::node& {
        const toml::node* n = t.get(key);
        return n != nullptr ? *n : static_cast<const toml::node&>(t);
    };
    const bool smtp = m.url.starts_with("smtp://") && has_host(m.url, "smtp://");
    const bool smtps = m.url.starts_with("smtps://") && has_host(m.url, "smtps://");
    if (!smtp && !smtps) {
        return at(path, node("url"), "mail.url",
                  "expected smtp://HOST[:PORT] (STARTTLS) or smtps://HOST[:PORT]");
    }
    if (m.from.find('@') == std::string::npos) {
        return at(path, node("from"), "mail.from", "expected an address, e.g. \"gua@example.org\"");
    }
    if (m.username.empty() != m.password_file.empty()) {
        return at(path, node(m.username.empty() ? "password_file" : "username"),
                  m.username.empty() ? "mail.username" : "mail.password_file",
                  "username and password_file go together (AUTH needs both)");
    }
    if (m.domain.find_first_of("@ /") != std::string::npos) {
        return at(path, node("domain"), "mail.domain", "expected a domain, e.g. \"example.org\"");
    }
    return {};
}

} // namespace

Result<void> parse_mail(const std::string& path, const toml::table& t, DeliverySettings& out) {
    if (auto r = check_keys(path, t, "mail",
                            {"url", "from", "username", "password_file", "starttls", "domain",
                             "ca_file", "timeout", "for"});
        !r) {
        return r;
    }
    MailSettings m;
    for (const auto& [key, field, example] :
         {std::tuple{"url", &MailSettings::url, "\"smtp://mail.example.org:587\""},
          std::tuple{"from", &MailSettings::from, "\"gua@example.org\""},
          std::tuple{"username", &MailSettings::username, "\"gua\""},
          std::tuple{"password_file", &MailSettings::password_file, "\"/etc/gua/mail-password\""},
          std::tuple{"domain", &MailSettings::domain, "\"example.org\""},
          std::tuple{"ca_file", &MailSettings::ca_file, "\"/etc/ssl/certs/ca.pem\""}}) {
        if (auto r = delivery_text(path, t, key, std::string("mail.") + key, example, m.*field);
            !r) {
            return r;
        }
    }
    if (const toml::node* n = t.get("starttls")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (v != "required" && v != "none") {
            return at(path, *n, "mail.starttls", "expected \"required\" or \"none\"");
        }
        m.starttls = v == "required";
    }
    if (auto r = delivery_timeout(path, t, "mail.timeout", m.timeout_us); !r) {
        return r;
    }
    if (auto r = delivery_audience(path, t, "mail.for", m.audience); !r) {
        return r;
    }
    if (auto r = check_mail(path, t, m); !r) {
        return r;
    }
    out.mail = m;
    return {};
}

namespace {

Result<WebhookSettings> parse_one_webhook(const std::string& path, const std::string& name,
                                          const toml::table& t) {
    const std::string prefix = "webhook." + name;
    if (auto r =
            check_keys(path, t, prefix, {"kind", "url", "url_file", "ca_file", "timeout", "for"});
        !r) {
        return r.error();
    }
    WebhookSettings w;
    w.name = name;
    const toml::node* kind = t.get("kind");
    const std::optional<std::string> k = kind ? kind->value<std::string>() : std::nullopt;
    if (k != "slack" && k != "teams" && k != "json") {
        return at(path, kind ? *kind : static_cast<const toml::node&>(t), prefix + ".kind",
                  "expected \"slack\", \"teams\" or \"json\"");
    }
    w.kind = *k;
    for (const auto& [key, field, example] :
         {std::tuple{"url", &WebhookSettings::url, "\"https://hooks.example.org/…\""},
          std::tuple{"url_file", &WebhookSettings::url_file, "\"/etc/gua/slack-webhook\""},
          std::tuple{"ca_file", &WebhookSettings::ca_file, "\"/etc/ssl/certs/ca.pem\""}}) {
        if (auto r = delivery_text(path, t, key, prefix + "." + key, example, w.*field); !r) {
            return r.error();
        }
    }
    if (w.url.empty() == w.url_file.empty()) {
        return at(path, t, prefix, "give exactly one of url and url_file");
    }
    if (!w.url.empty() && !w.url.starts_with("http://") && !w.url.starts_with("https://")) {
        return at(path, *t.get("url"), prefix + ".url", "expected an http:// or https:// URL");
    }
    if (auto r = delivery_timeout(path, t, prefix + ".timeout", w.timeout_us); !r) {
        return r.error();
    }
    if (auto r = delivery_audience(path, t, prefix + ".for", w.audience); !r) {
        return r.error();
    }
    return w;
}

} // namespace

Result<void> parse_webhooks(const std::string& path, const toml::table& table,
                            DeliverySettings& out) {
    for (const auto& [key, node] : table) {
        const std::string name(key.str());
        const bool ok_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '_';
        });
        const toml::table* t = node.as_table();
        if (!ok_name || t == nullptr) {
            return at(path, node, "webhook." + name,
                      "expected a table [webhook.NAME] with NAME of A-Z a-z 0-9 - _");
        }
        Result<WebhookSettings> w = parse_one_webhook(path, name, *t);
        if (!w) {
            return w.error();
        }
        out.webhooks.push_back(std::move(w).value());
    }
    return {};
}

Result<void> parse_delivery(const std::string& path, const toml::table& t, DeliverySettings& out) {
    if (auto r = check_keys(path, t, "delivery", {"attempts", "backoff", "max_backoff", "queue"});
        !r) {
        return r;
    }
    if (const toml::node* n = t.get("attempts")) {
        const std::optional<std::int64_t> v = whole_number(*n);
        if (!v || *v < 1 || *v > 20) {
            return at(path, *n, "delivery.attempts", "expected a whole number from 1 to 20");
        }
        out.attempts = static_cast<int>(*v);
    }
    for (const auto& [key, field] : {std::pair{"backoff", &DeliverySettings::backoff_us},
                                     std::pair{"max_backoff", &DeliverySettings::max_backoff_us}}) {
        if (const toml::node* n = t.get(key)) {
            const std::optional<std::string> v = n->value<std::string>();
            const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{""});
            if (!d || d.value() > k_us_per_hour) {
                return at(path, *n, std::string("delivery.") + key,
                          "expected a duration up to 1h, e.g. \"10s\"");
            }
            out.*field = d.value();
        }
    }
    if (const toml::node* n = t.get("queue")) {
        const std::optional<std::int64_t> v = whole_number(*n);
        if (!v || *v < 1 || *v > 100000) {
            return at(path, *n, "delivery.queue", "expected a whole number from 1 to 100000");
        }
        out.queue = static_cast<std::size_t>(*v);
    }
    return {};
}

} // namespace gua::config

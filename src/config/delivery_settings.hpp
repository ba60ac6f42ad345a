// SPDX-License-Identifier: Apache-2.0
// What gua.toml's [mail], [webhook.NAME] and [delivery] sections set: the transports that carry
// digests and policy notifications, and how failed deliveries are retried (docs/notify.md).
#pragma once

#include "core/time.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::config {

/// What a transport carries: `gua digest`'s digests, the policy's notify messages, or both.
enum class Audience : std::uint8_t { digest, policy, both };

/// True when a transport for `audience` carries `what` (digest or policy, never both).
inline bool carries(Audience audience, Audience what) {
    return audience == Audience::both || audience == what;
}

/// [mail]: SMTP through libcurl. Secrets stay in files: only their paths are kept here.
struct MailSettings {
    std::string url;           ///< smtp://host[:port] (STARTTLS) or smtps://host[:port]
    std::string from;          ///< the From address
    std::string username;      ///< AUTH user; empty: no AUTH
    std::string password_file; ///< AUTH password (first line of the file)
    bool starttls = true;      ///< starttls = "required" (default) or "none" (smtp:// only)
    std::string domain;        ///< user → user@domain when [digest.recipients] has no address
    std::string ca_file;       ///< CA certificates to verify the server with (default: system's)
    DurationUs timeout_us = 30 * k_us_per_second; ///< one delivery attempt, connecting included
    Audience audience = Audience::both;           ///< for = "digest" | "policy" | "both"
};

/// [webhook.NAME]: one HTTP(S) POST of a JSON payload per message.
struct WebhookSettings {
    std::string name;     ///< NAME: in logs and the /metrics label `transport`
    std::string kind;     ///< "slack", "teams" or "json"
    std::string url;      ///< url = "…" (the URL itself is a secret for Slack and Teams)
    std::string url_file; ///< url_file = "…": the URL on the first line of this file
    std::string ca_file;  ///< CA certificates for https (default: the system's)
    DurationUs timeout_us = 30 * k_us_per_second;
    Audience audience = Audience::both;
};

/// [mail], [webhook.*] and [delivery].
struct DeliverySettings {
    std::optional<MailSettings> mail;
    std::vector<WebhookSettings> webhooks; ///< in name order
    int attempts = 5; ///< [delivery] attempts: tries per message, first included
    DurationUs backoff_us = 10 * k_us_per_second;     ///< the wait before the first retry, doubled
    DurationUs max_backoff_us = 10 * k_us_per_minute; ///< … up to this
    std::size_t queue = 1000; ///< [delivery] queue: messages waiting at most; beyond: dropped
    /// True when any transport is configured.
    bool any() const { return mail.has_value() || !webhooks.empty(); }
};

} // namespace gua::config

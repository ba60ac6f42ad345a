// SPDX-License-Identifier: Apache-2.0
// Parsers of gua.toml's [mail], [webhook.NAME] and [delivery] sections
// (config/delivery_settings.hpp).
#pragma once

#include "config/delivery_settings.hpp"
#include "core/result.hpp"

#include <toml++/toml.h>

#include <string>

namespace gua::config {

/// Reads [mail]. A URL other than smtp:// or smtps://, a missing from, a username without a
/// password_file (or the reverse), an unknown starttls or for, a bad timeout and unknown keys are
/// errors naming file, line and key. Files are not read here (`gua report` never needs them).
Result<void> parse_mail(const std::string& path, const toml::table& table, DeliverySettings& out);

/// Reads [webhook.NAME] tables: kind slack|teams|json, exactly one of url and url_file, an
/// http(s) URL, for, timeout.
Result<void> parse_webhooks(const std::string& path, const toml::table& table,
                            DeliverySettings& out);

/// Reads [delivery]: attempts (1–20), backoff, max_backoff, queue (1–100000).
Result<void> parse_delivery(const std::string& path, const toml::table& table,
                            DeliverySettings& out);

} // namespace gua::config

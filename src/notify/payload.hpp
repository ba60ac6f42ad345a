// SPDX-License-Identifier: Apache-2.0
// The JSON bodies of the webhooks: Slack's incoming webhook, a Microsoft Teams Adaptive Card
// (Workflows "post to a channel when a webhook request is received"), and gua's generic JSON.
#pragma once

#include "notify/notice.hpp"

#include <nlohmann/json.hpp>

namespace gua::notify {

/// Slack: {"text": fallback, "blocks": [header (subject, ≤ 150 chars), section (mrkdwn text,
/// ≤ 3000 chars)]}, with &, < and > escaped as Slack's mrkdwn requires.
nlohmann::json slack_payload(const Notice& n);

/// Teams: {"type": "message", "attachments": [{"contentType":
/// "application/vnd.microsoft.card.adaptive", "content": AdaptiveCard 1.4 of TextBlocks}]}.
nlohmann::json teams_payload(const Notice& n);

/// Generic JSON: the notice's fields plus "source": "gua", "event", "subject" and "text".
nlohmann::json json_payload(const Notice& n);

/// The payload of webhook kind `kind` ("slack", "teams" or "json").
nlohmann::json webhook_payload(const std::string& kind, const Notice& n);

} // namespace gua::notify

// SPDX-License-Identifier: Apache-2.0
// One message to deliver: a digest or a policy notification, in the forms the transports need
// (mail headers and bodies, chat text, the generic JSON fields).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gua::notify {

/// What a transport sends. Built once (notices.hpp); transports only encode it.
struct Notice {
    std::string event;   ///< "digest" or "policy"
    std::string who;     ///< for logs and --dry-run, e.g. "user alice" (never a secret)
    std::string address; ///< the mail recipient; empty: no mail for this notice
    std::string subject; ///< one line
    std::string text;    ///< plain-text body
    std::string html;    ///< HTML body; empty: text only
    /// The generic JSON payload (kind = "json"): "event" and the message's own fields.
    nlohmann::json fields = nlohmann::json::object();
};

} // namespace gua::notify

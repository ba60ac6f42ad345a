// SPDX-License-Identifier: Apache-2.0
// One rendered digest for one recipient: what a delivery transport (mail, webhook) takes.
#pragma once

#include <string>

namespace gua::report {

/// A digest ready to deliver: who it is for, its subject and both bodies. Transports only send
/// it; nothing in it is computed again.
struct DigestMessage {
    std::string kind;    ///< "user", "team" (a team or namespace) or "admin"
    std::string name;    ///< the user, the team or namespace, or "admin"
    std::string address; ///< from [digest] recipients; empty when none is configured
    std::string subject; ///< one line, no line breaks
    std::string text;    ///< plain-text body
    std::string html;    ///< self-contained HTML body (inline style, no script)
};

} // namespace gua::report

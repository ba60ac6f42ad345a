// SPDX-License-Identifier: Apache-2.0
// The notices gua delivers: a digest (report::DigestMessage) or a policy notify decision, with
// the mail address they go to ([digest.recipients], else user@[mail] domain).
#pragma once

#include "notify/notice.hpp"
#include "policy/engine.hpp"
#include "report/digest_message.hpp"

#include <map>
#include <string>

namespace gua::notify {

/// The mail address for `name`: `address` when set; else, for a user whose name can be a
/// mailbox (A-Z a-z 0-9 . _ + -) and a non-empty `domain`, name@domain; else "".
std::string mail_address(const std::string& kind, const std::string& name,
                         const std::string& address, const std::string& domain);

/// A digest as a notice; `figures` is its JSON (report::digest_json), carried in the generic
/// payload under "digest".
Notice digest_notice(const report::DigestMessage& m, const std::string& domain,
                     nlohmann::json figures);

/// A policy notify decision as a notice to the process's user: the message the terminal gets
/// (policy::decision_message), the decision's facts as JSON fields, and the user's address from
/// `recipients` or `domain`.
Notice policy_notice(const policy::Decision& d, const std::string& host,
                     const std::map<std::string, std::string>& recipients,
                     const std::string& domain);

} // namespace gua::notify

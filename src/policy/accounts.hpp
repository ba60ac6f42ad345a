// SPDX-License-Identifier: Apache-2.0
// Account lookups for policy matching: the name of a real uid and the groups of a user, cached.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::policy {

/// Cached passwd/group lookups; entries are forgotten after an hour so account changes show up.
/// Not thread-safe.
class Accounts {
  public:
    /// The account name of `uid` ("uid:N" without a passwd entry, "unknown" for nullopt).
    std::string owner(std::optional<std::uint32_t> uid, TimeUs now);
    /// The names of the groups `user` belongs to (primary and supplementary); empty when the
    /// passwd database does not know the user.
    std::vector<std::string> groups(const std::string& user, TimeUs now);

  private:
    void expire(TimeUs now);

    TimeUs m_filled_at = 0;
    std::map<std::uint32_t, std::string> m_owners;
    std::map<std::string, std::vector<std::string>> m_groups;
};

} // namespace gua::policy

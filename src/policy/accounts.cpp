// SPDX-License-Identifier: Apache-2.0
// getpwnam_r + getgrouplist + getgrgid_r, cached for an hour.
#include "policy/accounts.hpp"

#include "identity/user.hpp"

#include <grp.h>
#include <pwd.h>

namespace gua::policy {

void Accounts::expire(TimeUs now) {
    if (now - m_filled_at > k_us_per_hour) {
        m_owners.clear();
        m_groups.clear();
        m_filled_at = now;
    }
}

std::string Accounts::owner(std::optional<std::uint32_t> uid, TimeUs now) {
    expire(now);
    if (!uid) {
        return identity::user_label(uid, std::nullopt);
    }
    auto it = m_owners.find(*uid);
    if (it == m_owners.end()) {
        it = m_owners.emplace(*uid, identity::user_label(uid, identity::passwd_name(*uid))).first;
    }
    return it->second;
}

std::vector<std::string> Accounts::groups(const std::string& user, TimeUs now) {
    expire(now);
    if (auto it = m_groups.find(user); it != m_groups.end()) {
        return it->second;
    }
    std::vector<std::string> names;
    std::vector<char> buffer(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buffer.data(), buffer.size(), &found) == 0 &&
        found != nullptr) {
        int count = 64;
        std::vector<gid_t> gids(static_cast<std::size_t>(count));
        if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &count) < 0) {
            gids.resize(static_cast<std::size_t>(count));
            getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &count);
        }
        gids.resize(static_cast<std::size_t>(count));
        std::vector<char> gbuffer(16384);
        for (const gid_t gid : gids) {
            group gr{};
            group* g = nullptr;
            if (getgrgid_r(gid, &gr, gbuffer.data(), gbuffer.size(), &g) == 0 && g != nullptr) {
                names.emplace_back(g->gr_name);
            }
        }
    }
    m_groups.emplace(user, names);
    return names;
}

} // namespace gua::policy

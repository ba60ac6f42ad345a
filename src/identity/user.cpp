// SPDX-License-Identifier: Apache-2.0
// Who to name for a process: the attribution rule (real uid vs login uid) and passwd lookups.
#include "identity/user.hpp"

#include <cerrno>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace gua::identity {
namespace {

constexpr std::size_t k_initial_passwd_buffer = 1024;
constexpr std::size_t k_max_passwd_buffer = 1 << 20;

} // namespace

std::optional<std::uint32_t> attributed_uid(std::optional<std::uint32_t> real_uid,
                                            std::optional<std::uint32_t> login_uid,
                                            std::uint32_t first_person_uid) {
    if (!real_uid) {
        return login_uid;
    }
    if (*real_uid < first_person_uid && login_uid && *login_uid >= first_person_uid) {
        return login_uid;
    }
    return real_uid;
}

namespace {

/// Field `member` of the passwd entry of `uid` through getpwuid_r; nullopt without an entry.
std::optional<std::string> passwd_field(std::uint32_t uid, char* passwd::*member) {
    const long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested)
                                           : k_initial_passwd_buffer);
    while (true) {
        passwd entry{};
        passwd* found = nullptr;
        const int rc = getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
        if (rc == ERANGE && buffer.size() < k_max_passwd_buffer) {
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (rc != 0 || found == nullptr || found->*member == nullptr) {
            return std::nullopt;
        }
        return std::string(found->*member);
    }
}

} // namespace

std::optional<std::string> passwd_name(std::uint32_t uid) {
    return passwd_field(uid, &passwd::pw_name);
}

std::optional<std::string> passwd_home(std::uint32_t uid) {
    return passwd_field(uid, &passwd::pw_dir);
}

std::string user_label(std::optional<std::uint32_t> uid, std::optional<std::string> name) {
    if (!uid) {
        return "unknown";
    }
    return (name && !name->empty()) ? std::move(*name) : "uid:" + std::to_string(*uid);
}

} // namespace gua::identity

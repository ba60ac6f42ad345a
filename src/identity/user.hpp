// SPDX-License-Identifier: Apache-2.0
// Who to name for a process: the attribution rule (real uid vs login uid) and passwd lookups.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gua::identity {

/// The lowest uid given to people (UID_MIN in Debian's login.defs); below it are system accounts.
inline constexpr std::uint32_t k_first_person_uid = 1000;

/// The uid a process is attributed to: its real uid, except that a real uid below
/// `first_person_uid` (root, daemons) yields to a set login uid at or above it (e.g. `sudo`);
/// with no real uid, the login uid; nullopt when neither is known.
std::optional<std::uint32_t> attributed_uid(std::optional<std::uint32_t> real_uid,
                                            std::optional<std::uint32_t> login_uid,
                                            std::uint32_t first_person_uid = k_first_person_uid);

/// The passwd name of `uid` via getpwuid_r; nullopt when the passwd database has no entry.
std::optional<std::string> passwd_name(std::uint32_t uid);

/// The passwd home directory of `uid` via getpwuid_r; nullopt when the passwd database has no
/// entry.
std::optional<std::string> passwd_home(std::uint32_t uid);

/// The user label for an Identity: the passwd name, "uid:N" without an entry, "unknown" for
/// nullopt.
std::string user_label(std::optional<std::uint32_t> uid, std::optional<std::string> name);

} // namespace gua::identity

// SPDX-License-Identifier: Apache-2.0
// What the policy's actions need from the daemon's credentials (user, groups, capabilities), and
// whether a given set of credentials has it: `terminate` needs CAP_KILL, `notify` the tty group.
#pragma once

#include "core/result.hpp"
#include "policy/rule.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::policy {

/// Capability numbers of <linux/capability.h> that the policy cares about.
inline constexpr int k_cap_dac_override = 1;
inline constexpr int k_cap_kill = 5;

/// The credentials a process acts with.
struct Credentials {
    std::uint32_t uid = 0;            ///< effective uid
    std::vector<std::uint32_t> gids;  ///< effective gid, then the supplementary groups
    std::uint64_t effective_caps = 0; ///< bit N = capability N (CapEff)
    bool has_capability(int cap) const { return (effective_caps >> cap & 1U) != 0; }
    bool in_group(std::uint32_t gid) const;
};

/// Parses the text of a /proc/<pid>/status file (Uid, Gid, Groups, CapEff). Errors name the
/// missing or malformed field.
Result<Credentials> parse_proc_status(const std::string& text);

/// Reads and parses `status_path` (e.g. /proc/1234/status, /proc/thread-self/status).
Result<Credentials> read_credentials(const std::string& status_path);

/// The gid of the group that owns users' terminals ("tty" in the group database); nullopt when
/// there is none.
std::optional<std::uint32_t> tty_group();

/// What `action` needs in order to act on other users' processes and terminals, in words:
/// e.g. "CAP_KILL" for terminate, "group tty (or CAP_DAC_OVERRIDE)" for notify; empty for log.
std::string required_privilege(Action action);

/// Nullopt when `creds` can carry out `action` on another user's process; otherwise why not, as
/// one clause, e.g. "uid 998 has no CAP_KILL". `tty_gid` is the terminals' group.
std::optional<std::string> missing_privilege(Action action, const Credentials& creds,
                                             std::optional<std::uint32_t> tty_gid);

} // namespace gua::policy

// SPDX-License-Identifier: Apache-2.0
// Pure parsers for /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/loginuid.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gua::identity {

/// The fields gua needs from /proc/<pid>/stat.
struct ProcStat {
    std::string comm; ///< field 2 without its parentheses (at most 15 bytes from the kernel)
    std::uint64_t start_ticks = 0; ///< field 22: start time in clock ticks since boot
};

/// Parses one /proc/<pid>/stat line. comm may hold spaces and parentheses, so the fields after it
/// are read after the LAST ')'. Errors on a missing ')' or a non-numeric start time.
Result<ProcStat> parse_proc_stat(std::string_view line);

/// The real, effective and saved uids of a process.
struct StatusUids {
    std::uint32_t real = 0;
    std::uint32_t effective = 0;
    std::uint32_t saved = 0;
};

/// Reads the first three numbers of the `Uid:` line of /proc/<pid>/status text; errors when the
/// line is missing or malformed.
Result<StatusUids> parse_status_uids(std::string_view status);

/// Reads the real uid (first number of the `Uid:` line) from /proc/<pid>/status text; errors when
/// the line is missing or malformed.
Result<std::uint32_t> parse_status_real_uid(std::string_view status);

/// Parses /proc/<pid>/loginuid; nullopt when unset (4294967295) or not a number.
std::optional<std::uint32_t> parse_loginuid(std::string_view text);

} // namespace gua::identity

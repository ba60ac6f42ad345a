// SPDX-License-Identifier: Apache-2.0
// Who is recording to a database, and what its daemon warns about: the daemon's locks on the
// database file itself, read from /proc/locks without touching them (probing a lock could make a
// starting daemon fail). The lock layout below is shared with daemon::DatabaseLock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace gua::ops {

/// The daemon's one-writer lock: an open-file-description (OFD) write lock on the database file
/// over [k_owner_lock_offset, k_owner_lock_offset + pid]. It sits far above SQLite's own lock
/// bytes (0x40000000 to 0x400001FF) and beyond any file size, so it never meets SQLite's locks or
/// data; every path to the file (symlinks, hard links) reaches the same lock, and there is no side
/// file to delete. /proc/locks shows OFD locks with pid -1, so the range's end names the pid.
inline constexpr std::int64_t k_owner_lock_offset = std::int64_t{1} << 62;
/// Ranges above this offset hold pids (the kernel's pid limit is 2^22).
inline constexpr std::int64_t k_max_pid = std::int64_t{1} << 22;

/// Conditions a running daemon publishes for `gua status` and `gua doctor`, each as a one-byte
/// OFD read lock at k_alert_lock_offset + the condition's value (no file to write, so they are
/// seen even when the disk is full).
enum class DaemonAlert : std::uint8_t {
    writes_failing = 0, ///< the latest tick could not be stored (disk full, read-only file, …)
    no_gpus = 1,        ///< the driver shows no GPU: nothing is being recorded
};
inline constexpr std::int64_t k_alert_lock_offset = k_owner_lock_offset - 64;
inline constexpr std::size_t k_alert_count = 2;

/// One line saying what `alert` means for the recording.
std::string_view describe(DaemonAlert alert);
/// What an administrator should do about `alert`.
std::string_view fix_for(DaemonAlert alert);

/// The pid holding the daemon lock of the database file `db_path` (any path naming it), else
/// legacy_lock_holder(db_path); nullopt when nobody holds either or the file does not exist.
std::optional<pid_t> database_lock_holder(const std::string& db_path);
/// The pid holding the exclusive flock on `db_path` + ".lock" that older gua releases took
/// instead; nullopt when nobody holds it or the file does not exist.
std::optional<pid_t> legacy_lock_holder(const std::string& db_path);

/// The alerts the daemon recording to `db_path` publishes now (empty when none or no daemon).
std::vector<DaemonAlert> database_alerts(const std::string& db_path);

} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// /proc/locks lines look like "3: FLOCK  ADVISORY  WRITE 20825 fe:00:10961036 0 EOF" or
// "1: OFDLCK ADVISORY  WRITE -1 fe:00:10953486 4611686018427387904 4611686018427398049"
// (type, pid, then major:minor in hex and the inode in decimal, then the byte range).
#include "ops/lock_holder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace gua::ops {

namespace {

/// One granted lock of /proc/locks.
struct LockLine {
    std::string type;   ///< FLOCK, POSIX, OFDLCK
    std::string access; ///< READ, WRITE
    long pid = 0;
    std::string file; ///< "major:minor:inode"
    std::int64_t start = 0;
    std::optional<std::int64_t> end; ///< nullopt: EOF
};

std::optional<std::string> file_key(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    return fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev),
                       static_cast<unsigned long long>(st.st_ino));
}

std::optional<std::int64_t> number(const std::string& text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

/// The granted locks (waiters, marked "->", are skipped).
std::vector<LockLine> granted_locks() {
    std::vector<LockLine> out;
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
        std::istringstream fields(line);
        std::string id;
        LockLine l;
        std::string mode;
        std::string start;
        std::string end;
        fields >> id >> l.type;
        if (l.type == "->") {
            continue;
        }
        fields >> mode >> l.access >> l.pid >> l.file >> start >> end;
        l.start = number(start).value_or(-1);
        l.end = number(end);
        out.push_back(std::move(l));
    }
    return out;
}

} // namespace

std::string_view describe(DaemonAlert alert) {
    switch (alert) {
    case DaemonAlert::writes_failing:
        return "the daemon cannot store ticks: its latest write failed (disk full, read-only "
               "file?)";
    case DaemonAlert::no_gpus:
        return "the daemon sees no GPU: nothing is being recorded";
    }
    return "unknown alert";
}

std::string_view fix_for(DaemonAlert alert) {
    switch (alert) {
    case DaemonAlert::writes_failing:
        return "free space on the database's file system (`df`), then check the daemon's log";
    case DaemonAlert::no_gpus:
        return "check the driver (`nvidia-smi`) and the service's device access (`gua doctor` "
               "as the service user)";
    }
    return "";
}

std::optional<pid_t> database_lock_holder(const std::string& db_path) {
    if (const std::optional<std::string> db = file_key(db_path)) {
        for (const LockLine& l : granted_locks()) {
            if (l.type == "OFDLCK" && l.access == "WRITE" && l.file == *db &&
                l.start == k_owner_lock_offset && l.end && *l.end > l.start &&
                *l.end - l.start <= k_max_pid) {
                return static_cast<pid_t>(*l.end - l.start);
            }
        }
    }
    return legacy_lock_holder(db_path);
}

std::optional<pid_t> legacy_lock_holder(const std::string& db_path) {
    const std::optional<std::string> legacy = file_key(db_path + ".lock");
    if (!legacy) {
        return std::nullopt;
    }
    for (const LockLine& l : granted_locks()) {
        if (l.type == "FLOCK" && l.access == "WRITE" && l.file == *legacy && l.pid > 0) {
            return static_cast<pid_t>(l.pid);
        }
    }
    return std::nullopt;
}

std::vector<DaemonAlert> database_alerts(const std::string& db_path) {
    std::vector<DaemonAlert> out;
    const std::optional<std::string> db = file_key(db_path);
    if (!db) {
        return out;
    }
    // The kernel merges adjacent read locks of one open file description into one range.
    for (const LockLine& l : granted_locks()) {
        if (l.type != "OFDLCK" || l.access != "READ" || l.file != *db || !l.end) {
            continue;
        }
        for (std::size_t slot = 0; slot < k_alert_count; ++slot) {
            const std::int64_t at = k_alert_lock_offset + static_cast<std::int64_t>(slot);
            const auto alert = static_cast<DaemonAlert>(slot);
            if (l.start <= at && at <= *l.end &&
                std::find(out.begin(), out.end(), alert) == out.end()) {
                out.push_back(alert);
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace gua::ops

// SPDX-License-Identifier: Apache-2.0
// Doctor: /proc visibility, free disk and the clock.
#include "core/units.hpp"
#include "ops/doctor.hpp"
#include "store/database.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <unistd.h>

namespace gua::ops {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_mib = 1024 * 1024;
constexpr std::uint64_t k_disk_fail_bytes = 100 * k_mib;
constexpr std::uint64_t k_disk_warn_bytes = 1024 * k_mib;
constexpr TimeUs k_sane_clock_us = 1704067200LL * k_us_per_second; // 2024-01-01
constexpr DurationUs k_clock_tolerance_us = 60 * k_us_per_second;

// The hidepid= option of the /proc mount (from /proc/self/mountinfo), empty when unset.
std::string proc_hidepid() {
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string id, parent, dev, root, mount_point;
        fields >> id >> parent >> dev >> root >> mount_point;
        if (mount_point != "/proc") {
            continue;
        }
        const std::size_t at = line.find("hidepid=");
        if (at == std::string::npos) {
            return {};
        }
        const std::string value = line.substr(at + 8);
        return value.substr(0, value.find_first_of(", \n"));
    }
    return {};
}

std::string nearest_existing(fs::path dir) {
    std::error_code ec;
    while (!dir.empty() && !fs::exists(dir, ec)) {
        dir = dir.parent_path();
    }
    return dir.empty() ? "/" : dir.string();
}

std::optional<TimeUs> last_tick(const std::string& db) {
    std::error_code ec;
    if (!fs::exists(db, ec)) {
        return std::nullopt;
    }
    try {
        store::Database database(db, store::OpenMode::read_only);
        if (database.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'tick_block'") == 0) {
            return std::nullopt;
        }
        // The newest block starts within the hour of the newest tick; its end is the newest end.
        const std::int64_t t = database.scalar("SELECT COALESCE(MAX(end_us), 0) FROM tick_block "
                                               "WHERE t0_us >= (SELECT MAX(t0_us) FROM "
                                               "tick_block) - 3600000000");
        return t > 0 ? std::optional<TimeUs>(t) : std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace

Finding check_proc_access() {
    Finding f{"proc_access", "/proc access", Severity::ok, "", ""};
    const std::string hidepid = proc_hidepid();
    if (!hidepid.empty() && hidepid != "0" && hidepid != "off") {
        f.severity = Severity::fail;
        f.message = fmt::format("/proc is mounted with hidepid={}: the daemon cannot see other "
                                "users' processes, so their GPU time has no owner",
                                hidepid);
        f.fix = "remount /proc without hidepid (`mount -o remount,hidepid=0 /proc` and in "
                "/etc/fstab), or mount it with gid=GROUP and add SupplementaryGroups=GROUP with "
                "`systemctl edit gua`";
        return f;
    }
    std::size_t others = 0;
    std::size_t readable = 0;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        struct stat st {};
        if (!std::isdigit(static_cast<unsigned char>(name[0])) ||
            ::stat(e.path().c_str(), &st) != 0 || st.st_uid == ::geteuid()) {
            continue;
        }
        ++others;
        if (std::ifstream((e.path() / "status").string()).good()) {
            ++readable;
        }
    }
    if (others > 0 && readable < others) {
        f.severity = Severity::fail;
        f.message =
            fmt::format("only {} of {} other users' processes are readable", readable, others);
        f.fix = "check the /proc mount options and security modules (AppArmor, SELinux)";
        return f;
    }
    f.message = fmt::format("other users' /proc entries are readable (no hidepid; {} such "
                            "processes now)",
                            others);
    return f;
}

Finding check_disk(const std::string& db) {
    Finding f{"disk", "free disk", Severity::ok, "", ""};
    const std::string dir = nearest_existing(fs::path(db).parent_path());
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) {
        f.severity = Severity::warn;
        f.message = fmt::format("cannot read free space of {}", dir);
        return f;
    }
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    f.message = fmt::format("{} free on {}", format_bytes(free_bytes), dir);
    if (free_bytes < k_disk_warn_bytes) {
        f.severity = free_bytes < k_disk_fail_bytes ? Severity::fail : Severity::warn;
        f.fix = "free some space: a busy 8-GPU host records a few MiB per day";
    }
    return f;
}

Finding check_clock(const std::string& db) {
    Finding f{"clock", "clock", Severity::ok, "", ""};
    const TimeUs now = wall_now();
    f.message = format_iso8601(now);
    if (now < k_sane_clock_us) {
        f.severity = Severity::fail;
        f.message += ": the clock is not set";
        f.fix = "set the time and enable synchronization: `timedatectl set-ntp true`";
        return f;
    }
    if (const std::optional<TimeUs> last = last_tick(db);
        last && *last > now + k_clock_tolerance_us) {
        f.severity = Severity::fail;
        f.message += fmt::format(", but the database has a tick at {}: the clock went back",
                                 format_iso8601(*last));
        f.fix = "correct the clock (`timedatectl`); ticks recorded meanwhile overlap old ones";
        return f;
    }
    timex tx{};
    if (::adjtimex(&tx) == TIME_ERROR || (tx.status & STA_UNSYNC) != 0) {
        f.severity = Severity::warn;
        f.message += ", not synchronized (NTP)";
        f.fix = "enable time synchronization: `timedatectl set-ntp true`, or install chrony";
        return f;
    }
    f.message += ", synchronized";
    return f;
}

Finding check_kernel_log(const std::string& path) {
    Finding f{"kernel_log", "kernel log (Xid lines)", Severity::ok, "", ""};
    if (path.empty()) {
        f.severity = Severity::info;
        f.message = "off ([daemon] kernel_log = \"\"): Xids come from NVML events alone";
        return f;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        ::close(fd);
        f.message = fmt::format("{} is readable: the driver's Xid lines are recorded", path);
        return f;
    }
    const int err = errno;
    f.severity = Severity::info;
    f.message = fmt::format("{} is not readable here ({}): Xids come from NVML events alone, "
                            "without the process the driver names",
                            path, std::strerror(err));
    f.fix = err == EPERM || err == EACCES
                ? "run the daemon as root with CAP_SYSLOG (kernel.dmesg_restrict=1); the packaged "
                  "unit needs the drop-in of docs/faults.md"
                : "check [daemon] kernel_log in gua.toml";
    return f;
}

} // namespace gua::ops

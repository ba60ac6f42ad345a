// SPDX-License-Identifier: Apache-2.0
// The one-writer guard: OFD locks (released automatically if the process dies, never by another
// descriptor of the same file closing, unlike POSIX record locks).
#include "daemon/lock.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::daemon {

namespace {

bool ofd_lock(int fd, short type, std::int64_t start, std::int64_t length) {
    struct flock fl {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(start);
    fl.l_len = static_cast<off_t>(length);
    while (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

} // namespace

DatabaseLock::DatabaseLock(const std::string& db_path, IfMissing if_missing) : m_path(db_path) {
    const bool create = if_missing == IfMissing::create;
    if (create) {
        std::error_code ec;
        const std::filesystem::path parent = std::filesystem::path(db_path).parent_path();
        if (!parent.empty()) {
            std::filesystem::create_directories(parent, ec);
        }
    }
    do {
        m_fd = UniqueFd(::open(db_path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644));
    } while (!m_fd.valid() && errno == EINTR);
    if (!m_fd.valid() && errno == ENOENT) {
        throw Fatal(fmt::format("database {} does not exist", db_path));
    }
    if (!m_fd.valid()) {
        throw Fatal(fmt::format("cannot open database {}: {}", db_path, std::strerror(errno)));
    }
    const std::int64_t pid = ::getpid();
    if (!ofd_lock(m_fd.get(), F_WRLCK, ops::k_owner_lock_offset, pid + 1)) {
        const int error = errno;
        m_fd = UniqueFd{};
        if (error != EAGAIN && error != EACCES) {
            throw Fatal(fmt::format("cannot lock database {}: {}", db_path, std::strerror(error)));
        }
        const std::optional<pid_t> owner = ops::database_lock_holder(db_path);
        throw Fatal(fmt::format("another gua daemon (pid {}) is already recording to {}",
                                owner ? std::to_string(*owner) : std::string("?"), db_path),
                    ExitCode::conflict);
    }
    // A daemon of an older gua locks "<db>.lock" instead and cannot see this lock.
    if (const std::optional<pid_t> old = ops::legacy_lock_holder(db_path)) {
        m_fd = UniqueFd{};
        throw Fatal(
            fmt::format("another gua daemon (pid {}) is already recording to {}", *old, db_path),
            ExitCode::conflict);
    }
}

void DatabaseLock::set_alert(ops::DaemonAlert alert, bool raised) noexcept {
    const auto slot = static_cast<std::size_t>(alert);
    if (slot >= m_raised.size() || m_raised[slot] == raised) {
        return;
    }
    const std::int64_t offset = ops::k_alert_lock_offset + static_cast<std::int64_t>(slot);
    const auto type = static_cast<short>(raised ? F_RDLCK : F_UNLCK);
    if (ofd_lock(m_fd.get(), type, offset, 1)) {
        m_raised[slot] = raised;
    }
}

std::optional<std::string> DatabaseLock::file_gone() const {
    struct stat held {};
    if (::fstat(m_fd.get(), &held) != 0) {
        return std::nullopt; // cannot tell; never a false alarm
    }
    struct stat named {};
    if (::stat(m_path.c_str(), &named) == 0) {
        if (named.st_dev == held.st_dev && named.st_ino == held.st_ino) {
            return std::nullopt;
        }
        return fmt::format("database {} was replaced by another file", m_path);
    }
    if (held.st_nlink == 0) {
        return fmt::format("database {} was deleted", m_path);
    }
    return fmt::format("database {} was moved or deleted ({})", m_path, std::strerror(errno));
}

} // namespace gua::daemon

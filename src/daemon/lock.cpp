// flock-based single-writer guard (released automatically if the process dies).
#include "daemon/lock.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace gua::daemon {

DatabaseLock::DatabaseLock(const std::string& db_path) {
    const std::string path = db_path + ".lock";
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::filesystem::create_directories(parent, ec);
    }
    m_fd = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!m_fd.valid()) {
        throw Fatal(fmt::format("cannot open lock file {}: {}", path, std::strerror(errno)));
    }
    if (::flock(m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
        char buf[32] = {};
        const ssize_t n = ::pread(m_fd.get(), buf, sizeof buf - 1, 0);
        m_fd = UniqueFd{};
        const std::string owner = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "?";
        throw Fatal(fmt::format("another gua daemon (pid {}) is already recording to {}",
                                owner.substr(0, owner.find('\n')), db_path),
                    ExitCode::conflict);
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(m_fd.get(), 0) == 0) {
        [[maybe_unused]] const ssize_t written = ::pwrite(m_fd.get(), pid.data(), pid.size(), 0);
    }
}

} // namespace gua::daemon

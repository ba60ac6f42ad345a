// SPDX-License-Identifier: Apache-2.0
// Owned file descriptors and pidfds.
#include "core/fd.hpp"

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace gua {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

UniqueFd::~UniqueFd() {
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

int open_pidfd(std::uint32_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0U));
}

} // namespace gua
